"""An item a DataLoader worker cannot read or prepare ends the command in the one line the main process would give,
naming the table, the row and the image (``data_loading.ItemError``, ``NamedErrors``, ``worker_errors``): a JPEG
cut short, one whose header makes it a decompression bomb, a collate that fails on one item; for retrieve and
rerank with workers or without, and for ``mteb``, whose export refuses the same image by name. Never torch's
"Caught ... in DataLoader worker process" and the worker's traceback."""

import shutil
import struct

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _mipr_helpers import read_jsonl  # noqa: E402
from _paths import MIPR_EMBEDDING  # noqa: E402
from _paths import MIPR_SAMPLE  # noqa: E402
from tiny_models import build_tiny_chinese_clip  # noqa: E402
from tiny_models import build_tiny_llava_reranker  # noqa: E402

from mmrhub.cli import main  # noqa: E402
from mmrhub.declaration import Side  # noqa: E402
from mmrhub.retrieve.data_loading import ItemError  # noqa: E402
from mmrhub.retrieve.data_loading import NamedErrors  # noqa: E402
from mmrhub.retrieve.data_loading import Row  # noqa: E402
from mmrhub.retrieve.data_loading import worker_errors  # noqa: E402

CORPUS = read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")
BROKEN = CORPUS[100]  # a product in the fourth batch of 32


def cut_short(data: bytes) -> bytes:
    return data[: len(data) // 2]


def a_bomb(data: bytes) -> bytes:
    """The JPEG with its frame header saying 16000 x 16000 pixels: over Pillow's decompression-bomb limit."""
    start = next(data.find(marker) for marker in (b"\xff\xc0", b"\xff\xc1", b"\xff\xc2") if data.find(marker) > 0)
    return data[: start + 5] + struct.pack(">HH", 16000, 16000) + data[start + 9 :]


DAMAGES = {
    "cut short": (cut_short, "Truncated File Read"),
    "a decompression bomb": (
        a_bomb,
        "DecompressionBombError: Image size (256000000 pixels) exceeds limit of 178956970",
    ),
}


@pytest.fixture(scope="module")
def clip_model(built):
    return built(build_tiny_chinese_clip, "chinese-clip-tiny", [r["title"] for r in CORPUS])


def damaged_sample(tmp_path, damage: str):
    """A copy of the MIPR sample whose product ``BROKEN`` has its image damaged; (folder, the image's path)."""
    folder = shutil.copytree(MIPR_SAMPLE, tmp_path / "mipr")
    image = folder / "images" / "product_images" / BROKEN["pict_url"]
    image.write_bytes(DAMAGES[damage][0](image.read_bytes()))
    return folder, image


def expected_line(command: str, image, damage: str) -> str:
    return (
        f"mmrhub {command}: error: corpus item_id={BROKEN['item_id']}: image {image} cannot be decoded as an image "
        f"({DAMAGES[damage][1]}"
    )


def error_lines(err: str) -> list:
    return [line for line in err.splitlines() if "error" in line.lower() or "Traceback" in line or "Caught" in line]


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_retrieve_names_the_image_a_worker_cannot_decode(clip_model, tmp_path, damage, workers, capsys):
    folder, image = damaged_sample(tmp_path, damage)
    run = tmp_path / "runs" / "run.json"
    argv = ["retrieve", "mipr", "--data-dir", str(folder), "--model", str(clip_model), "--output", str(run)]
    assert main([*argv, "--num-workers", workers, "--cache-dir", str(tmp_path / "cache")]) == 1
    (line,) = error_lines(capsys.readouterr().err)  # one line, the same with workers or without
    assert line.startswith(expected_line("retrieve", image, damage)) and line.endswith(
        "). Replace or remove that file."
    )
    assert not run.exists() and not (tmp_path / "cache").exists()


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_rerank_names_the_image_a_worker_cannot_decode(built, tmp_path, workers, capsys):
    reranker = built(build_tiny_llava_reranker, "reranker")
    folder, image = damaged_sample(tmp_path, "cut short")
    run = tmp_path / "runs" / "run.json"
    argv = ["rerank", "mipr", "--data-dir", str(folder), "--candidates", str(MIPR_EMBEDDING), "--model", str(reranker)]
    argv += ["--top-n", "50", "--output", str(run), "--num-workers", workers, "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 1
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(expected_line("rerank", image, "cut short"))
    assert not run.exists()


@pytest.mark.slow
def test_mteb_refuses_the_image_by_name_before_the_model_runs(tmp_path, capsys):
    pytest.importorskip("mteb")
    folder, image = damaged_sample(tmp_path, "cut short")
    run = tmp_path / "runs" / "run.json"
    argv = ["mteb", "mipr", "--data-dir", str(folder), "--model", "mteb/baseline-random-encoder"]
    assert main([*argv, "--output", str(run), "--results", str(tmp_path / "results")]) == 1
    (line,) = error_lines(capsys.readouterr().err)
    # the export MTEB reads names rows by its own id column, and the image as the export names files
    assert line.startswith(f"mmrhub mteb: error: corpus id={BROKEN['item_id']}: image ")
    assert line.endswith(
        f"/{image.name} cannot be decoded as an image (Truncated File Read). Replace or remove that file."
    )
    assert not run.exists()


class FailsOn:
    """A collate that fails on one item (as a processor does on an image it cannot take), whatever the batch."""

    def __init__(self, bad: str):
        self.bad = bad

    def __call__(self, rows):
        if any(row.id == self.bad for row in rows):
            raise RuntimeError("Input image size (32*32) doesn't match model (28*28).")
        return [row.id for row in rows]


class FailsOnPairs:
    """A collate that fails on any batch of more than one row (so no single item is to blame)."""

    def __call__(self, rows):
        if len(rows) > 1:
            raise KeyError("a batch")
        return [row.id for row in rows]


class Rows:
    def __init__(self, count: int):
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return Row(f"q{index}", "text", None, None, f"images/q{index}.jpg")


def batches(collate, workers: int) -> list:
    import torch

    loader = torch.utils.data.DataLoader(
        Rows(10), batch_size=4, num_workers=workers, collate_fn=NamedErrors(collate, Side("queries", "idx", "q", "i"))
    )
    return list(worker_errors(loader))


@pytest.mark.parametrize("workers", [0, 2])
def test_a_collate_failing_on_one_item_names_it(workers):
    assert batches(FailsOn("none"), workers) == [["q0", "q1", "q2", "q3"], ["q4", "q5", "q6", "q7"], ["q8", "q9"]]
    with pytest.raises(ItemError) as raised:
        batches(FailsOn("q6"), workers)
    assert str(raised.value) == (
        "queries idx=q6 (image images/q6.jpg): the model's input cannot be made from it (RuntimeError: Input image "
        "size (32*32) doesn't match model (28*28).)."
    )


@pytest.mark.parametrize("workers", [0, 2])
def test_an_error_no_item_is_to_blame_for_keeps_its_type_and_words(workers):
    with pytest.raises(KeyError) as raised:
        batches(FailsOnPairs(), workers)
    assert str(raised.value) == "'a batch'" and "Caught" not in str(raised.value)
