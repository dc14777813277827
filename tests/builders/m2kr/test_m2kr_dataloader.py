"""Images of the split archive decode inside 2 DataLoader worker processes, map-style and streaming."""

import hashlib
from importlib.metadata import entry_points

import pytest
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import prepare

import m2kr

torch = pytest.importorskip("torch")


def _fingerprint(image):
    return image.size, hashlib.sha256(image.tobytes()).hexdigest()


def _in_workers(dataset, context):
    # collate_fn=list: the rows (decoded by the worker that fetched them) come back as they are.
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=16, num_workers=2, collate_fn=list, multiprocessing_context=context
    )
    return [row for batch in loader for row in batch]


@pytest.fixture(scope="module")
def passages(tmp_path_factory):
    dataset = prepare("challenge_passage", SAMPLE, tmp_path_factory.mktemp("cache"))
    expected = {row["passage_id"]: _fingerprint(row["image"]) for row in dataset}  # archives already open here
    return dataset, expected


def test_forked_workers_decode_every_image(passages):
    dataset, expected = passages
    rows = _in_workers(dataset, "fork")
    assert [row["passage_id"] for row in rows] == dataset["passage_id"]
    assert {row["passage_id"]: _fingerprint(row["image"]) for row in rows} == expected


def test_forked_workers_decode_a_streamed_dataset(passages):
    _, expected = passages
    streamed = m2kr.M2kr(config_name="challenge_passage", data_dir=str(SAMPLE)).as_streaming_dataset(split="train")
    rows = _in_workers(streamed, "fork")  # one shard: one worker streams it, the other stops at once
    assert {row["passage_id"]: _fingerprint(row["image"]) for row in rows} == expected


@pytest.mark.slow  # spawned workers import torch and datasets afresh: tens of seconds
@pytest.mark.skipif(
    "splitzip" not in {ep.name for ep in entry_points(group="fsspec.specs")},
    reason="the fsspec.specs entry point for splitzip is not installed (pyproject.toml + pip install -e)",
)
def test_spawned_workers_resolve_the_protocol_through_the_entry_point(passages):
    dataset, expected = passages
    rows = _in_workers(dataset.select(range(40)), "spawn")
    assert {row["passage_id"]: _fingerprint(row["image"]) for row in rows} == {
        pid: expected[pid] for pid in dataset["passage_id"][:40]
    }
