"""Generated damage to cache entries, for each of the five caches (seeded and bounded, so CI is repeatable).

Each case damages one entry's bytes (a file swapped in from another entry, an in-place edit at the same size, a
truncation, an extra or a missing file) under its own ``entry.json``; reading the cache then gives the right
result, from an entry rebuilt (the judgment cache, the builders' entries) or refused for the caller to rebuild
(embeddings, rerank scores, thumbnails). A damaged entry is never served.
"""

import io
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from _mipr_helpers import copy_sample
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from PIL import Image

import mipr
import mmr_cache
from mmrhub.benchmarks import MIPR
from mmrhub.report.thumbnail_cache import ThumbnailCache
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.rerank.score_cache import ScoreCache
from mmrhub.scoring import judgment_cache

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
KINDS = ("swapped", "edited", "truncated", "extra", "missing", "foreign manifest")


@st.composite
def damages(draw):
    """(kind, which file (an index into the entry's sorted files), where (a fraction of its size), byte mask,
    name of an extra file)."""
    return (
        draw(st.sampled_from(KINDS)),
        draw(st.integers(0, 1000)),
        draw(st.floats(0, 1, exclude_max=True)),
        draw(st.integers(1, 255)),
        draw(st.sampled_from(["extra.arrow", "notes.txt", ".hidden", "x.npy"])),
    )


def damage(folder: Path, donor: Path, case) -> None:
    """Apply ``case`` to the entry ``folder``; ``donor`` is another entry of the same cache (same file names)."""
    kind, which, where, mask, extra = case
    files = sorted(path for path in folder.iterdir() if path.name != mmr_cache.ENTRY)
    path = files[which % len(files)]
    data = path.read_bytes()
    if kind == "foreign manifest":  # another entry's entry.json (key, files and hashes) over these files
        (folder / mmr_cache.ENTRY).write_bytes((donor / mmr_cache.ENTRY).read_bytes())
    elif kind == "swapped":
        path.write_bytes((donor / path.name).read_bytes())
    elif kind == "edited":
        edited = bytearray(data)
        edited[int(where * len(data))] ^= mask
        path.write_bytes(bytes(edited))
    elif kind == "truncated":
        path.write_bytes(data[: int(where * len(data))])
    elif kind == "extra":
        (folder / extra).write_bytes(data[:mask])
    else:
        path.unlink()


def restore(pristine: Path, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(pristine, folder)


# --- the judgment cache ------------------------------------------------------------------------------------------


@pytest.fixture
def judged(tmp_path, monkeypatch):
    """Two MIPR folders whose judgments differ, each with its entry in the judgment cache, and the right gains."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    one = copy_sample(tmp_path / "one")
    two = copy_sample(tmp_path / "two")
    annotation = two / "mipr_annotation.jsonl"
    annotation.write_text(annotation.read_text(encoding="utf-8").replace('"L2"', '"L1"'), encoding="utf-8")
    expected = {}
    for folder in (one, two):
        before = set(judgment_cache.cache_root().iterdir()) if judgment_cache.cache_root().is_dir() else set()
        expected[folder] = MIPR.read_truth(folder).judgments.gain.tolist()
        (entry,) = set(judgment_cache.cache_root().iterdir()) - before
        shutil.copytree(entry, tmp_path / "pristine" / folder.name)
        expected[folder.name] = entry
    return one, two, expected, tmp_path / "pristine"


@SETTINGS
@given(case=damages())
def test_a_damaged_judgment_entry_is_rebuilt_never_served(judged, case):
    one, two, expected, pristine = judged
    entry, donor = expected["one"], expected["two"]
    restore(pristine / "one", entry)
    restore(pristine / "two", donor)
    damage(entry, donor, case)
    assert MIPR.read_truth(one).judgments.gain.tolist() == expected[one]
    assert mmr_cache.read_entry(entry, entry.name) is not None  # rebuilt whole


# --- the builders' entries ---------------------------------------------------------------------------------------


@pytest.fixture
def built(tmp_path):
    """Two MIPR folders whose qrels differ, each with its builder entry (in caches of their own), and their rows."""
    rows, entries, keys = {}, {}, {}
    for name, edit in (("one", None), ("two", ('"L2"', '"L1"'))):
        folder = copy_sample(tmp_path / name / "mipr")
        if edit:
            annotation = folder / "mipr_annotation.jsonl"
            annotation.write_text(annotation.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
        rows[name] = load_qrels(folder)
        (manifest,) = (tmp_path / name / "cache").rglob(mmr_cache.ENTRY)
        entries[name] = manifest.parent
        keys[name] = mipr.Mipr(config_name="qrels", data_dir=str(folder), cache_dir=str(tmp_path / name / "cache")).hash
        shutil.copytree(manifest.parent, tmp_path / "pristine" / name)
    assert rows["one"] != rows["two"]
    return tmp_path, rows, entries, keys


def load_qrels(folder: Path) -> list:
    return mipr.load("qrels", data_dir=str(folder), cache_dir=str(folder.parent / "cache")).to_list()


@SETTINGS
@given(case=damages())
def test_a_damaged_builder_entry_is_rebuilt_never_served(built, case):
    root, rows, entries, keys = built
    restore(root / "pristine" / "one", entries["one"])
    damage(entries["one"], root / "pristine" / "two", case)
    assert load_qrels(root / "one" / "mipr") == rows["one"]
    assert mmr_cache.read_entry(entries["one"], keys["one"]) is not None  # rebuilt whole


# --- embeddings, rerank scores, thumbnails: a damaged entry is refused, and the caller's rebuild is served ---------


IDENTITY = {"model": "tiny"}


def jpeg(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (12, 12), color).save(buffer, format="JPEG")
    return buffer.getvalue()


def embeddings(root: Path):
    """(entry folder, another entry, read, write, the right value) of the embedding cache."""
    right = np.arange(24, dtype=np.float32).reshape(6, 4)
    one, two = EmbeddingCache(root, IDENTITY, "one", 6), EmbeddingCache(root, IDENTITY, "two", 6)
    two.save(-right)
    return one.folder, two.folder, one.load, lambda: one.save(right), right


def rerank_scores(root: Path):
    cache, right = ScoreCache(root, IDENTITY, "data"), np.linspace(0, 1, 7, dtype=np.float32)
    cache.save("two", right[::-1].copy())
    chunks = cache.folder / "chunks"
    return chunks / "one", chunks / "two", lambda: cache.load("one", 7), lambda: cache.save("one", right), right


def thumbnails(root: Path):
    cache, right = ThumbnailCache(root), jpeg("blue")
    cache.put("two", jpeg("green"))
    return (
        cache.folder / "on" / "one",
        cache.folder / "tw" / "two",
        lambda: cache.get("one"),
        (lambda: cache.put("one", right)),
        right,
    )


def same(got, right) -> bool:
    return got == right if isinstance(right, bytes) else np.array_equal(got, right)


@SETTINGS
@given(case=damages(), cache=st.sampled_from([embeddings, rerank_scores, thumbnails]))
def test_a_damaged_entry_of_a_caller_rebuilt_cache_is_refused(tmp_path_factory, case, cache):
    folder, donor, read, write, right = cache(tmp_path_factory.mktemp("cache"))
    write()
    assert same(read(), right)
    damage(folder, donor, case)
    assert read() is None  # every damage changes the entry's bytes: refused, never served
    write()  # the caller's rebuild
    assert same(read(), right)


# --- entries over changed images: the embeddings and rerank scores are keyed on each image's bytes ----------------


IMAGE_CHANGES = ("replaced", "cut", "edited, size and time kept", "grown", "touched")


@st.composite
def image_changes(draw):
    """(kind, which corpus row, which other row's image, where (a fraction of its size), byte mask)."""
    return (
        draw(st.sampled_from(IMAGE_CHANGES)),
        draw(st.integers(0, 253)),
        draw(st.integers(1, 253)),
        draw(st.floats(0, 1, exclude_max=True)),
        draw(st.integers(1, 255)),
    )


def change_image(paths: list, case) -> None:
    """Apply ``case`` to one of the image files ``paths`` (the corpus rows' images, in row order)."""
    kind, row, other, where, mask = case
    path = paths[row]
    state, data = os.stat(path), Path(path).read_bytes()
    if kind == "replaced":
        data = Path(paths[(row + other) % len(paths)]).read_bytes()
    elif kind == "cut":
        data = data[: int(where * len(data))]
    elif kind == "edited, size and time kept":
        edited = bytearray(data)
        edited[int(where * len(data))] ^= mask
        data = bytes(edited)
    elif kind == "grown":
        data += bytes([mask])
    Path(path).write_bytes(data)
    if kind in ("edited, size and time kept", "touched"):
        os.utime(path, ns=(state.st_atime_ns, state.st_mtime_ns + (kind == "touched") * 10**9))


@pytest.fixture
def corpus_copy(tmp_path, monkeypatch):
    """A copy of the MIPR sample's corpus, loaded, with its image paths and a pristine copy of their bytes; its
    digests remembered, as a warm run finds them (files settle within 0.2 s here, not 2 s). The embeddings' key
    (``data_loading``) imports torch: without it the test is skipped."""
    pytest.importorskip("torch")
    from datasets import Image as ImageFeature

    from mmrhub import image_digests as digests_module
    from mmrhub.image_digests import image_digests

    monkeypatch.setattr(digests_module, "SETTLE_NS", 200_000_000)

    folder = copy_sample(tmp_path / "mipr")
    dataset = mipr.load("corpus", data_dir=str(folder), cache_dir=str(tmp_path / "datasets"))
    paths = [value["path"] for value in dataset.cast_column("image", ImageFeature(decode=False))["image"]]
    time.sleep(0.3)
    image_digests(dataset, cache_dir=tmp_path / "digests")
    return tmp_path, dataset, paths, {path: Path(path).read_bytes() for path in paths}


@SETTINGS
@given(case=image_changes())
def test_cached_vectors_and_scores_are_never_served_for_changed_images(corpus_copy, case):
    from mmrhub.image_digests import image_digests
    from mmrhub.retrieve.data_loading import fingerprint

    root, dataset, paths, pristine = corpus_copy
    for path, data in pristine.items():
        if Path(path).read_bytes() != data:
            Path(path).write_bytes(data)
    key = lambda: fingerprint(dataset, MIPR.corpus, image_digests(dataset, cache_dir=root / "digests"))  # noqa: E731
    before = key()
    vectors = EmbeddingCache(root / "embeddings", IDENTITY, before, len(paths))
    vectors.save(np.ones((len(paths), 4), dtype=np.float32))
    ScoreCache(root / "rerank", IDENTITY, before).save("chunk", np.ones(3, dtype=np.float32))
    change_image(paths, case)
    after = key()
    served = EmbeddingCache(root / "embeddings", IDENTITY, after, len(paths)).load()
    scores = ScoreCache(root / "rerank", IDENTITY, after).load("chunk", 3)
    if Path(paths[case[1]]).read_bytes() == pristine[paths[case[1]]]:  # touched, or replaced by equal bytes
        assert after == before and served is not None and scores is not None
    else:
        assert after != before and served is None and scores is None
