"""Hostile folders and files: ``export --overwrite`` never deletes what it did not write, image files that are
not images (or lie outside the data folder) are refused, and a full disk is a clear error that keeps the old
export. Each case checks that nothing was deleted."""

import errno
import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from _export_helpers import export
from _export_helpers import run_cli

import mmrhub.export.parquet as parquet
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.export.atomic import MARKER

SAMPLE = BENCHMARKS["mipr"].sample_dir
PRODUCT = "7ab0ab84666fa41b"  # the first corpus row of the sample


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` (links as their targets) with its bytes."""
    return {
        path.relative_to(folder).as_posix(): os.readlink(path) if path.is_symlink() else path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() or path.is_symlink()
    }


@pytest.fixture
def data(tmp_path) -> Path:
    """A copy of the MIPR sample at ``tmp_path/project/data``."""
    folder = tmp_path / "project" / "data"
    shutil.copytree(SAMPLE, folder)
    return folder


def refused(capsys, argv, message: str):
    """``mmrhub <argv>`` exits 1 with ``message`` in its one error line (the last; progress bars may precede it)."""
    capsys.readouterr()
    assert run_cli(argv) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert message in lines[-1], lines[-1]
    assert [line for line in lines if line.startswith("mmrhub ")] == lines[-1:]


# --- export --overwrite -----------------------------------------------------------------------------------------


def test_overwrite_refuses_the_data_folder(data, capsys):
    before = snapshot(data)
    refused(
        capsys,
        ["export", "mipr", str(data), "--data-dir", str(data), "--overwrite"],
        f"mmrhub export: error: {data} holds the data being exported ({data}): --overwrite would delete it. "
        "Choose an OUT folder outside the data folder.",
    )
    assert snapshot(data) == before


def test_overwrite_refuses_a_folder_above_the_data_folder(data, capsys):
    parent = data.parent
    before = snapshot(parent)
    refused(
        capsys,
        ["export", "mipr", str(parent), "--data-dir", str(data), "--overwrite"],
        f"{parent} holds the data being exported ({data}): --overwrite would delete it.",
    )
    assert snapshot(parent) == before


def test_overwrite_refuses_the_data_folder_even_with_a_marker(data, capsys):
    (data / MARKER).write_text("planted")
    before = snapshot(data)
    refused(
        capsys, ["export", "mipr", str(data), "--data-dir", str(data), "--overwrite"], "--overwrite would delete it"
    )
    assert snapshot(data) == before


def test_overwrite_refuses_an_unrelated_folder(tmp_path, capsys):
    repo = tmp_path / "code"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "notes.txt").write_text("mine")
    before = snapshot(repo)
    refused(
        capsys,
        ["export", "mipr", str(repo), "--overwrite"],
        f"mmrhub export: error: {repo} was not written by `mmrhub export` (it has no {MARKER} file), so --overwrite "
        "will not replace it. Choose a new OUT folder, or remove this one yourself.",
    )
    assert snapshot(repo) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["code"]


def test_overwrite_refuses_the_current_folder(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("mine")
    monkeypatch.chdir(work)
    refused(capsys, ["export", "mipr", ".", "--overwrite"], f"{work} was not written by `mmrhub export`")
    assert snapshot(work) == {"keep.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


def test_overwrite_refuses_a_link_to_an_export(tmp_path, capsys):
    assert run_cli(["export", "mipr", str(tmp_path / "real")]) == 0
    (tmp_path / "link").symlink_to(tmp_path / "real")
    before = snapshot(tmp_path / "real")
    refused(capsys, ["export", "mipr", str(tmp_path / "link"), "--overwrite"], "was not written by `mmrhub export`")
    assert snapshot(tmp_path / "real") == before and (tmp_path / "link").is_symlink()


def test_stale_partial_without_the_marker_is_kept(tmp_path):
    stale = tmp_path / ".mipr.partial-999999999-abcdef01"  # a dead pid, but not a folder an export made
    stale.mkdir()
    (stale / "mine.txt").write_text("mine")
    export("mipr", tmp_path / "mipr")
    assert (stale / "mine.txt").read_text() == "mine"


# --- image files ------------------------------------------------------------------------------------------------


def product_image(data: Path) -> Path:
    return data / "images" / "product_images" / f"{PRODUCT}.jpg"


# A text file named .jpg passes the builder (it opens no image) and is refused by the export's signature check;
# an empty file is refused already by the builder, at preparation.
@pytest.mark.parametrize(
    "content,problem",
    [
        (
            b"this is a text file, not a JPEG\n",
            f"mmrhub export: error: corpus item_id={PRODUCT}: image {{image}} is not "
            "an image: it starts with b'this is ', not a JPEG, PNG, GIF, WebP, BMP or TIFF signature. Replace or remove "
            "that file.",
        ),
        (b"", "mmrhub export: error: {corpus}: image file {image} is empty (0 bytes); expected a non-empty file."),
    ],
)
def test_a_file_that_is_not_an_image_is_refused(data, tmp_path, capsys, content, problem):
    product_image(data).write_bytes(content)
    before = snapshot(data)
    out = tmp_path / "out"
    refused(
        capsys,
        ["export", "mipr", str(out), "--data-dir", str(data)],
        problem.format(image=product_image(data), corpus=data / "mipr_corpus.jsonl"),
    )
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["project"]
    assert snapshot(data) == before


def test_a_link_outside_the_data_folder_is_refused(data, tmp_path, capsys):
    secret = tmp_path / "secret.jpg"
    shutil.copy(product_image(data), secret)  # a real JPEG: only where it lies is wrong
    product_image(data).unlink()
    product_image(data).symlink_to(secret)
    out = tmp_path / "out"
    refused(
        capsys,
        ["export", "mipr", str(out), "--data-dir", str(data)],
        f"image file {product_image(data)} is a symbolic link to {secret}, outside the data folder {data}",
    )
    assert not out.exists() and secret.exists()


def test_a_link_inside_the_data_folder_is_embedded(data, tmp_path):
    other = data / "images" / "product_images" / "copy.jpg"
    shutil.copy(product_image(data), other)
    product_image(data).unlink()
    product_image(data).symlink_to(other)
    out = export("mipr", tmp_path / "out", data_dir=str(data))
    assert (out / "corpus").is_dir()


@pytest.mark.parametrize(
    "content,name",
    [
        (b"\xff\xd8\xff\xe0", "JPEG"),
        (b"\x89PNG\r\n\x1a\n", "PNG"),
        (b"GIF89a", "GIF"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "WebP"),
        (b"BM\x00\x00", "BMP"),
        (b"II*\x00", "TIFF"),
        (b"MM\x00*", "TIFF"),
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", None),
        (b"<svg xmlns=", None),
    ],
)
def test_image_signatures(content, name):
    assert parquet.image_format(content) == name


# --- disk full --------------------------------------------------------------------------------------------------


class FullDisk(io.RawIOBase):
    """A shard file on a disk that fills after ``room`` bytes: writes past it fail as the OS fails them."""

    def __init__(self, path, room: int):
        self.file, self.room = open(path, "wb"), room

    def writable(self):
        return True

    def write(self, data):
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return self.file.write(data)

    def close(self):
        self.file.close()
        super().close()


def fill_disk_after(monkeypatch, room: int):
    monkeypatch.setattr(parquet, "open_shard", lambda path: FullDisk(path, room))


def assert_disk_full_error(capsys, out: Path, argv):
    refused(
        capsys,
        argv,
        f"mmrhub export: error: No space left on device while exporting to {out.parent}: the partial export was removed",
    )


def test_disk_full_while_writing_keeps_the_previous_export(tmp_path, monkeypatch, capsys):
    out = export("mipr", tmp_path / "mipr")
    before = snapshot(out)
    fill_disk_after(monkeypatch, 20_000)
    assert_disk_full_error(capsys, out, ["export", "mipr", str(out), "--overwrite"])
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mipr"]


def test_disk_full_on_a_new_export_leaves_nothing(tmp_path, monkeypatch, capsys):
    fill_disk_after(monkeypatch, 20_000)
    assert_disk_full_error(capsys, tmp_path / "mipr", ["export", "mipr", str(tmp_path / "mipr")])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_arrows_own_file_gives_the_same_error(tmp_path, monkeypatch, capsys):
    """The shards are Arrow's own files: the kernel's ENOSPC comes through Arrow with its errno."""
    monkeypatch.setattr(parquet, "open_shard", lambda path: pa.OSFile("/dev/full", "wb"))
    assert_disk_full_error(capsys, tmp_path / "mipr", ["export", "mipr", str(tmp_path / "mipr")])
    assert list(tmp_path.iterdir()) == []


def test_too_little_free_space_fails_before_the_writer(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(parquet.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    assert_disk_full_error(capsys, tmp_path / "mipr", ["export", "mipr", str(tmp_path / "mipr")])
    assert list(tmp_path.iterdir()) == []


# --- the bundled sample's card ----------------------------------------------------------------------------------


def test_the_sample_card_says_it_is_a_sample(tmp_path, data):
    card = (export("mipr", tmp_path / "sample") / "README.md").read_text(encoding="utf-8")
    assert (
        "**This is a small sample, not the benchmark**: 27 `queries` rows, 254 `corpus` rows, 27 `qrels` rows" in card
    )
    assert "pretty_name: MIPR sample" in card
    full = (export("mipr", tmp_path / "full", data_dir=str(data)) / "README.md").read_text(encoding="utf-8")
    assert "not the benchmark" not in full
    assert "The benchmark has 3,522 queries, 30,731 products and 447,809 graded judgments." in full


# --- progress ---------------------------------------------------------------------------------------------------


def test_progress_bar_per_config_with_rows_per_second(tmp_path, capsys):
    capsys.readouterr()
    assert run_cli(["export", "mipr", str(tmp_path / "mipr")]) == 0
    err = capsys.readouterr().err
    for config, rows in (("queries", 27), ("corpus", 254), ("qrels", 27)):
        assert re.search(rf"Exporting {config}: 100%\|[^|]*\| {rows}/{rows} \[[^\]]* rows/s\]", err), err


# --- images decoded as readers decode them ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda jpeg: jpeg[:100], "cannot be decoded as an image (Truncated File Read)"),
        (lambda jpeg: b"BM" + b"this is a text file" * 4, "cannot be decoded as an image (Truncated File Read)"),
    ],
    ids=["JPEG cut to 100 bytes", "text starting with BM"],
)
def test_an_image_a_reader_cannot_decode_is_refused_at_export(data, tmp_path, capsys, damage, reason):
    product_image(data).write_bytes(damage(product_image(data).read_bytes()))
    out = tmp_path / "out"
    assert run_cli(["export", "mipr", str(out), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"mmrhub export: error: corpus item_id={PRODUCT}: image {product_image(data)} {reason}")
    assert err.endswith("Replace or remove that file.") and not out.exists()


def test_an_image_over_pillows_limit_is_refused_at_export(data, tmp_path, capsys, monkeypatch):
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # the sample's 40x40 images are then "bombs"
    assert run_cli(["export", "mipr", str(tmp_path / "out"), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert "cannot be decoded as an image (Image size (" in err and "decompression bomb" in err


INTERRUPT_DURING_EXPORT = """
import os, signal, sys, threading, time
import mmrhub.export.parquet as parquet
from mmrhub.cli import main
read = parquet.read_file
def slow(path, root):
    time.sleep(0.2)
    return read(path, root)
parquet.read_file = slow
threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
sys.exit(main(["export", "mipr", sys.argv[1], "--data-dir", sys.argv[2]]))
"""


@pytest.mark.slow
def test_ctrl_c_during_export_exits_130_without_waiting_for_every_read(data, tmp_path):
    out = tmp_path / "out" / "mipr"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPT_DURING_EXPORT, str(out), str(data)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 130 and result.stderr.rstrip().endswith("mmrhub: interrupted")
    assert time.monotonic() - started < 20  # 254 slow reads would take 25 s on two threads
    assert not out.exists() and not list((tmp_path / "out").iterdir())


def test_a_pipe_where_an_image_should_be_is_refused_naming_it(data, tmp_path, capsys):
    product_image(data).unlink()
    os.mkfifo(product_image(data))  # reading it would wait for a writer forever
    refused(
        capsys,
        ["export", "mipr", str(tmp_path / "out"), "--data-dir", str(data)],
        f"{data / 'mipr_corpus.jsonl'}: image file {product_image(data)} is not a regular file; expected a non-empty file.",
    )
