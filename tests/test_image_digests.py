"""The corpus embeddings and rerank scores are keyed on each image's bytes, not only its name: a copy of the data
with one image replaced, cut short, edited in place at the same size and time, or an archive member changed gets
another key, so its vectors are computed again, never served from the sample's entry."""

import os
import shutil
import time

import numpy as np
import pytest
from _m2kr_helpers import copy_sample as copy_m2kr
from _m2kr_helpers import png_bytes
from _m2kr_helpers import replace_passage_members
from _mipr_helpers import copy_sample as copy_mipr

import m2kr
import mipr
import mmr_cache
from mmrhub import image_digests as digests_module
from mmrhub.benchmarks import MIPR
from mmrhub.image_digests import image_digests
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.rerank.score_cache import ScoreCache

IDENTITY = {"model": "tiny", "dtype": "float32"}


@pytest.fixture
def corpus(tmp_path):
    """A copy of the MIPR sample's corpus, loaded; its image files are the copy's to change."""
    data = copy_mipr(tmp_path / "mipr")
    dataset = mipr.load("corpus", data_dir=str(data), cache_dir=str(tmp_path / "datasets"))
    return data, dataset


def image_path(dataset, row: int) -> str:
    from datasets import Image

    return dataset.cast_column("image", Image(decode=False))[row]["image"]["path"]


def fingerprint(*args):
    """The embeddings' key (``data_loading`` imports torch: without it, a test that keys vectors is skipped)."""
    pytest.importorskip("torch")
    from mmrhub.retrieve.data_loading import fingerprint

    return fingerprint(*args)


def corpus_key(dataset, cache_dir) -> str:
    return fingerprint(dataset, MIPR.corpus, image_digests(dataset, cache_dir=cache_dir))


def cached_then_changed(dataset, cache_dir, change):
    """(embeddings cache entry of the data as it was, the same cache asked after ``change()``)."""
    before = EmbeddingCache(cache_dir / "embeddings", IDENTITY, corpus_key(dataset, cache_dir), len(dataset))
    assert before.save(np.ones((len(dataset), 4), dtype=np.float32))
    change()
    return before, EmbeddingCache(cache_dir / "embeddings", IDENTITY, corpus_key(dataset, cache_dir), len(dataset))


def test_a_replaced_image_gets_other_vectors(corpus, tmp_path):
    data, dataset = corpus
    target, donor = image_path(dataset, 3), image_path(dataset, 4)
    before, after = cached_then_changed(dataset, tmp_path / "cache", lambda: shutil.copyfile(donor, target))
    assert before.load() is not None  # the entry is there, under the old key
    assert after.key != before.key and after.load() is None


def test_a_cut_image_gets_other_vectors(corpus, tmp_path):
    data, dataset = corpus
    target = image_path(dataset, 7)

    def cut():
        data = open(target, "rb").read()
        open(target, "wb").write(data[: len(data) // 3])

    before, after = cached_then_changed(dataset, tmp_path / "cache", cut)
    assert after.key != before.key and after.load() is None


def edit_in_place(path: str) -> None:
    """One byte changed, the size kept and the modification time set back to what it was."""
    state = os.stat(path)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0x55
    open(path, "wb").write(bytes(data))
    os.utime(path, ns=(state.st_atime_ns, state.st_mtime_ns))
    assert os.path.getsize(path) == state.st_size and os.stat(path).st_mtime_ns == state.st_mtime_ns


def test_a_same_size_same_time_edit_right_after_hashing_is_caught(corpus, tmp_path):
    """A file written within SETTLE_NS of its hashing is not remembered: the edit is hashed."""
    data, dataset = corpus
    target = image_path(dataset, 5)
    shutil.copyfile(image_path(dataset, 6), target)  # written just now
    before, after = cached_then_changed(dataset, tmp_path / "cache", lambda: edit_in_place(target))
    assert after.key != before.key and after.load() is None


def test_a_same_size_same_time_edit_of_a_remembered_file_is_caught_by_its_change_time(corpus, tmp_path, monkeypatch):
    data, dataset = corpus
    monkeypatch.setattr(digests_module, "SETTLE_NS", 0)
    cache = tmp_path / "cache"
    first = image_digests(dataset, cache_dir=cache)
    hashed = []
    real_hash = mmr_cache.content_hash
    images = str(data)
    monkeypatch.setattr(
        mmr_cache, "content_hash", lambda path: str(path).startswith(images) and hashed.append(path) or real_hash(path)
    )
    assert image_digests(dataset, cache_dir=cache) == first and hashed == []  # remembered: nothing read
    target = image_path(dataset, 9)
    time.sleep(0.05)  # past the file system's time stamp granularity
    edit_in_place(target)
    again = image_digests(dataset, cache_dir=cache)
    assert hashed == [target]  # only the edited file is read again
    assert [row for row, (a, b) in enumerate(zip(first, again)) if a != b] == [9]


def test_a_damaged_digest_entry_is_not_trusted(corpus, tmp_path, monkeypatch):
    """The remembered digests are an entry of the one cache mechanism: edited, it is hashed again, not served."""
    data, dataset = corpus
    monkeypatch.setattr(digests_module, "SETTLE_NS", 0)
    cache = tmp_path / "cache"
    first = image_digests(dataset, cache_dir=cache)
    (entry,) = [path for path in cache.rglob("digests.npy")]
    stored = entry.read_bytes()
    assert stored.count(first[0].removeprefix("xxh3:").encode("utf-32-le")) == 1
    entry.write_bytes(stored.replace(first[0].removeprefix("xxh3:").encode("utf-32-le"), "0".encode("utf-32-le") * 32))
    assert image_digests(dataset, cache_dir=cache) == first


def test_a_changed_zip_member_gets_other_vectors_and_scores(tmp_path):
    """M2KR's screenshots: the CRC-32 and size from the archive's directory, read for nothing."""
    data = copy_m2kr(tmp_path)
    load = lambda: m2kr.load("challenge_passage", data_dir=str(data), cache_dir=str(tmp_path / "datasets"))  # noqa: E731
    dataset = load()
    first = image_digests(dataset)
    assert all(digest.startswith("crc32:") for digest in first)
    names = dataset.cast_column("image", __import__("datasets").Image(decode=False))["image"]
    member = names[2]["path"].split("::")[0].removeprefix("splitzip://")
    replace_passage_members(data, transform=lambda name, bytes_: png_bytes() if name == member else bytes_)
    changed = load()
    again = image_digests(changed)
    assert [row for row, (a, b) in enumerate(zip(first, again)) if a != b] == [2]
    table = m2kr_corpus_side()
    key_before = fingerprint(dataset, table, first)
    key_after = fingerprint(changed, table, again)
    scores = ScoreCache(tmp_path / "rerank", IDENTITY, key_before)
    assert scores.save("chunk-0", np.ones(3, dtype=np.float32))
    assert ScoreCache(tmp_path / "rerank", IDENTITY, key_after).load("chunk-0", 3) is None
    assert scores.load("chunk-0", 3) is not None


def m2kr_corpus_side():
    from mmrhub.benchmarks import M2KR

    return M2KR.corpus


def test_an_image_that_cannot_be_read_is_named(corpus, tmp_path):
    data, dataset = corpus
    target = image_path(dataset, 1)
    os.remove(target)
    with pytest.raises(OSError, match=f"cannot read the image {target}: No such file"):
        image_digests(dataset, cache_dir=tmp_path / "cache")


def test_calls_naming_different_files_of_a_folder_keep_each_others_digests(corpus, tmp_path, monkeypatch):
    """Two reports' galleries name different images of one folder: each call remembers its files beside what the
    other remembered, so neither reads again what the other left."""
    from mmrhub.image_digests import local_file_digests

    data, dataset = corpus
    monkeypatch.setattr(digests_module, "SETTLE_NS", 0)
    cache = tmp_path / "cache"
    paths = [image_path(dataset, row) for row in range(8)]
    first, second = local_file_digests(paths[:4], cache), local_file_digests(paths[4:], cache)
    hashed = []
    real_hash = mmr_cache.content_hash
    images = str(data)
    monkeypatch.setattr(
        mmr_cache, "content_hash", lambda path: str(path).startswith(images) and hashed.append(path) or real_hash(path)
    )
    assert local_file_digests(paths[:4], cache) == first and local_file_digests(paths[4:], cache) == second
    assert hashed == []
    assert local_file_digests([None, str(data / "missing.jpg"), "zip://a.jpg::b.zip", paths[0]], cache) == [
        None,
        None,
        None,
        first[0],
    ]
