"""The process's device as the pipeline sets it up (mmrhub/retrieve/distributed.py)."""

import pytest

torch = pytest.importorskip("torch")

from mmrhub.retrieve import distributed  # noqa: E402


@pytest.mark.parametrize(
    ("given", "local_rank", "expected"),
    [("cuda", None, "cuda:0"), ("cuda", "3", "cuda:3"), ("cuda:1", "3", "cuda:1"), (None, "2", "cuda:2")],
)
def test_cuda_without_an_index_is_this_processs_gpu(monkeypatch, given, local_rank, expected):
    # torch.cuda.set_device refuses a device without an index ("Expected a torch.device with a specified index",
    # torch 2.11 on the GPU check's H200): `--device cuda` must name this process's GPU.
    chosen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    if local_rank is not None:
        monkeypatch.setenv("LOCAL_RANK", local_rank)
    context = distributed.setup(given)
    assert context.device == torch.device(expected)
    assert chosen == [torch.device(expected)]
    assert chosen[0].index is not None


def test_cpu_stays_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "set_device", lambda device: pytest.fail("set_device on a CPU run"))
    assert distributed.setup("cpu").device == torch.device("cpu")
