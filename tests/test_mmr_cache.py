"""The one cache mechanism (mmr_cache): every cache's entries vouch for their bytes, the one folder swap
(``mmrhub.writing.write_folder``, which writes them) keeps its promises, and an unusable HF_HOME is said in one line."""

import errno
import io
import json
import os

import numpy as np
import pytest
from PIL import Image

import mmr_cache
from mmr_cache import move_into_place
from mmrhub.cli import main
from mmrhub.report.thumbnail_cache import ThumbnailCache
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.rerank.score_cache import ScoreCache
from mmrhub.writing import new_entry
from mmrhub.writing import write_folder

IDENTITY = {"model": "tiny", "pooling": "mean"}


def jpeg(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), color).save(buffer, format="JPEG")
    return buffer.getvalue()


def flip_last_byte(path) -> None:
    """Change the file's last byte in place: same size, and for .npy the last value."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.write_bytes(bytes(data))


def test_embeddings_edited_in_place_at_the_same_size_are_not_served(tmp_path):
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    cache = EmbeddingCache(tmp_path, IDENTITY, "data", 4)
    cache.save(vectors)
    np.testing.assert_array_equal(cache.load(), vectors)
    (stored,) = tmp_path.rglob("embeddings.npy")
    flip_last_byte(stored)
    assert np.load(stored).shape == (4, 3)  # still a well-formed array of the right shape
    assert cache.load() is None


def test_rerank_scores_edited_in_place_at_the_same_size_are_not_served(tmp_path):
    cache = ScoreCache(tmp_path, IDENTITY, "data")
    cache.save("chunk-0", np.array([0.5, 0.25, 0.125], np.float32))
    np.testing.assert_array_equal(cache.load("chunk-0", 3), [0.5, 0.25, 0.125])
    (stored,) = tmp_path.rglob("*.npy")
    flip_last_byte(stored)
    assert cache.load("chunk-0", 3) is None


def test_a_rerank_chunk_swapped_from_another_chunk_is_not_served(tmp_path):
    cache = ScoreCache(tmp_path, IDENTITY, "data")
    cache.save("a", np.array([1, 2], np.float32))
    cache.save("b", np.array([3, 4], np.float32))
    (a,) = tmp_path.rglob("a/*.npy")
    (b,) = tmp_path.rglob("b/*.npy")
    a.write_bytes(b.read_bytes())
    assert cache.load("a", 2) is None
    np.testing.assert_array_equal(cache.load("b", 2), [3, 4])


def test_a_thumbnail_edited_in_place_with_its_jpeg_markers_kept_is_not_served(tmp_path):
    cache, data = ThumbnailCache(tmp_path), jpeg("red")
    cache.put("k", data)
    assert cache.get("k") == data
    (stored,) = tmp_path.rglob("*.jpg")
    edited = bytearray(data)
    edited[len(data) // 2] ^= 0xFF
    stored.write_bytes(bytes(edited))
    assert cache.get("k") is None
    cache.put("k", data)
    assert cache.get("k") == data


def test_an_entry_vouches_for_its_key_and_every_file(tmp_path):
    with new_entry(tmp_path / "e", "key", meta={"n": 1}) as work:
        (work / "a.bin").write_bytes(b"abc")
    assert mmr_cache.read_entry(tmp_path / "e", "key") == ({"n": 1},)
    assert mmr_cache.read_entry(tmp_path / "e", "other") is None
    manifest = json.loads((tmp_path / "e" / mmr_cache.ENTRY).read_text())
    assert manifest["files"] == {"a.bin": [3, mmr_cache.bytes_hash(b"abc")]}
    (tmp_path / "e" / "extra").write_bytes(b"")
    assert mmr_cache.read_entry(tmp_path / "e", "key") is None
    (tmp_path / "e" / "extra").unlink()
    (tmp_path / "e" / "a.bin").write_bytes(b"abd")
    assert mmr_cache.read_entry(tmp_path / "e", "key") is None
    assert mmr_cache.read_entry(tmp_path / "e", "key", check_bytes=False) == ({"n": 1},)  # sizes alone: fooled


def test_a_folder_swap_keeps_the_old_folder_until_the_new_one_is_complete(tmp_path):
    target = tmp_path / "t"
    with write_folder(target) as work:
        (work / "one").write_text("1")
    with pytest.raises(RuntimeError), write_folder(target, replace=True) as work:
        (work / "two").write_text("2")
        raise RuntimeError("killed half way")
    assert sorted(os.listdir(tmp_path)) == ["t"] and os.listdir(target) == ["one"]
    with pytest.raises(OSError), write_folder(target) as work:  # never merged without replace
        (work / "two").write_text("2")
    assert os.listdir(target) == ["one"] and sorted(os.listdir(tmp_path)) == ["t"]
    with write_folder(target, replace=True) as work:
        (work / "two").write_text("2")
    assert os.listdir(target) == ["two"] and sorted(os.listdir(tmp_path)) == ["t"]


def test_one_mover_puts_files_and_folders_in_place(tmp_path):
    """``mmr_cache.move_into_place``: a file replaces its target; a folder replaces one only when asked, after
    ``before_replace``, and leaves nothing aside."""
    (tmp_path / "new.txt").write_text("new")
    (tmp_path / "file.txt").write_text("old")
    mmr_cache.move_into_place(tmp_path / "new.txt", tmp_path / "file.txt")
    assert (tmp_path / "file.txt").read_text() == "new" and not (tmp_path / "new.txt").exists()
    target, work = tmp_path / "folder", tmp_path / "work"
    for folder, name in ((target, "old"), (work, "new")):
        folder.mkdir()
        (folder / name).write_text(name)
    with pytest.raises(OSError):  # never merged without replace
        mmr_cache.move_into_place(work, target)

    def refuse():
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):  # before_replace may refuse: nothing moved
        mmr_cache.move_into_place(work, target, replace=True, before_replace=refuse)
    assert os.listdir(target) == ["old"] and os.listdir(work) == ["new"]
    mmr_cache.move_into_place(work, target, replace=True)
    assert os.listdir(target) == ["new"] and sorted(os.listdir(tmp_path)) == ["file.txt", "folder"]


def test_the_m2kr_archive_directory_cache_is_moved_in_by_the_one_mover(tmp_path, monkeypatch):
    """The zip directory's cache entry replaces one that fails its check, through ``move_into_place``, and leaves
    nothing beside it."""
    import m2kr_archive

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    moves = []
    monkeypatch.setattr(m2kr_archive, "move_into_place", lambda *a, **k: moves.append(a) or move_into_place(*a, **k))
    key = mmr_cache.key_of("directory")
    m2kr_archive._store_directory(key, 7, b"old directory")
    folder = m2kr_archive.directory_folder(key)
    assert m2kr_archive._cached_directory(key) == (7, b"old directory")
    (folder / m2kr_archive._DIRECTORY_FILE).write_bytes(b"bad directory")  # same size: fails the entry's check
    assert m2kr_archive._cached_directory(key) is None
    m2kr_archive._store_directory(key, 9, b"new directory")
    assert m2kr_archive._cached_directory(key) == (9, b"new directory")
    assert [path.name for path in folder.parent.iterdir()] == [key] and len(moves) == 2


def test_asides_of_dead_writers_are_cleared_and_nothing_else(tmp_path):
    dead = tmp_path / ".e.partial-999999999-abcdef01"
    alive = tmp_path / f".e.partial-{os.getpid()}-abcdef02"
    other = tmp_path / ".f.partial-999999999-abcdef03"
    for folder in (dead, alive, other):
        folder.mkdir()
    with new_entry(tmp_path / "e", "key") as work:
        (work / "x").write_text("x")
    assert sorted(os.listdir(tmp_path)) == sorted(["e", alive.name, other.name])


def test_hf_home_is_found_one_way(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert mmr_cache.cache_root("truth") == tmp_path / "xdg" / "huggingface" / "mmrhub" / "truth"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert mmr_cache.cache_root("embeddings") == tmp_path / "hf" / "mmrhub" / "embeddings"


def test_hf_home_that_is_a_file_is_said_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "hf").write_text("not a folder")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    assert main(["info", "mipr"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"mmrhub info: error: The cache folder {tmp_path}/hf/datasets (HF_HOME is {tmp_path}/hf) cannot be made: "
        "a file stands where one of its folders must be: set HF_HOME (or HF_DATASETS_CACHE, or cache_dir=) to a "
        "writable folder (e.g. HF_HOME=$HOME/hf).\n"
    )


def test_a_read_only_hf_home_is_said_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    makedirs = os.makedirs

    def read_only(path, *args, **kwargs):  # what a read-only mount says (root writes anywhere, so it is simulated)
        if str(path).startswith(str(tmp_path / "hf")):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return makedirs(path, *args, **kwargs)

    monkeypatch.setattr(os, "makedirs", read_only)
    assert main(["info", "mipr"]) == 1
    err = capsys.readouterr().err
    assert "[Errno" not in err and err.count("\n") == 1
    assert f"The cache folder {tmp_path}/hf/datasets (HF_HOME is {tmp_path}/hf) is on a read-only file system" in err
    assert "set HF_HOME (or HF_DATASETS_CACHE, or cache_dir=) to a writable folder" in err


def test_an_embedding_cache_that_cannot_be_written_warns_and_goes_on(tmp_path, caplog):
    (tmp_path / "hf").write_text("not a folder")
    cache = EmbeddingCache(tmp_path / "hf" / "embeddings", IDENTITY, "data", 1)
    assert cache.save(np.ones((1, 2), np.float32)) is False
    assert "cannot be made: a file stands where one of its folders must be" in caplog.text
    assert cache.load() is None
