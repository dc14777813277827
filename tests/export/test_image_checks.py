"""The export's image checks made cheaper: a JPEG passed by its markers or decoded at an eighth of its size is
refused exactly where a full decode refuses it, every damaged image is still refused naming its file, and the
files are opened once, without following a link, with the guarantees of before (regular files only, nothing
outside the data folder)."""

import errno
import io
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from _export_helpers import run_cli
from PIL import Image

import mmrhub.export.parquet as parquet
from mmr_inputs import InputError
from mmr_inputs import read_regular
from mmrhub.benchmarks import BENCHMARKS

SAMPLE = BENCHMARKS["mipr"].sample_dir
PRODUCT = "7ab0ab84666fa41b"  # the first corpus row of the sample


def photo(side: int = 160) -> np.ndarray:
    """A gradient with a little noise: compresses as a photo does."""
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 255, side)
    return (np.add.outer(ramp, ramp)[:, :, None] / 2 + rng.normal(0, 6, (side, side, 3))).clip(0, 255).astype("uint8")


def encoded(pixels: np.ndarray, kind: str, **options) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, kind, **options)
    return buffer.getvalue()


def damaged(content: bytes, seed: int, count: int) -> list:
    """``content`` cut at evenly spaced lengths, with one byte changed (anywhere, and in the headers and tables),
    and with a run of bytes deleted."""
    rng = random.Random(seed)
    variants = [content[:n] for n in range(0, len(content), max(1, len(content) // 60))]
    for limit in [len(content)] * count + [min(600, len(content))] * (count // 3):
        changed = bytearray(content)
        changed[rng.randrange(limit)] = rng.randrange(256)
        variants.append(bytes(changed))
    for _ in range(count // 3):
        cut = bytearray(content)
        start = rng.randrange(len(cut))
        del cut[start : start + rng.randrange(1, 40)]
        variants.append(bytes(cut))
    return variants


def decodes_whole(content: bytes) -> bool:
    """What a reader does: ``datasets.Image`` opens the file with Pillow and loads every pixel."""
    try:
        with Image.open(io.BytesIO(content)) as image:
            image.load()
        return True
    except Exception:
        return False


def passes_check(content: bytes) -> bool:
    try:
        parquet.check_image(content)
        return True
    except parquet.ImageError:
        return False


@pytest.mark.parametrize(
    "options",
    [{"quality": 90}, {"quality": 90, "progressive": True}, {"restart_marker_blocks": 4}, {"subsampling": 0}],
    ids=["baseline", "progressive", "restart markers", "4:4:4"],
)
def test_the_jpeg_check_refuses_what_a_full_decode_refuses(options):
    content = encoded(photo(), "JPEG", **options)
    variants = damaged(content, seed=len(options), count=240)
    whole = [decodes_whole(v) for v in variants]
    assert [passes_check(v) for v in variants] == whole
    assert 40 < whole.count(False) < len(variants) - 40  # both kinds of file are there
    assert passes_check(content)


def test_a_grey_jpeg_and_other_formats_are_checked_as_they_decode():
    grey = encoded(photo()[:, :, 0], "JPEG")
    png = encoded(photo(), "PNG")
    for content in damaged(grey, 1, 60) + damaged(png, 2, 60) + damaged(encoded(photo(), "GIF"), 3, 30):
        assert passes_check(content) == decodes_whole(content)


def test_a_png_damaged_under_a_valid_crc_is_refused():
    """``verify`` would pass it: the chunk's CRC is right, the compressed pixels are not."""
    import zlib

    content = bytearray(encoded(photo(), "PNG", compress_level=9))
    start = content.index(b"IDAT") + 4
    length = int.from_bytes(content[start - 8 : start - 4], "big")
    content[start + 40 : start + 60] = bytes(20)
    content[start + length : start + length + 4] = zlib.crc32(bytes(content[start - 4 : start + length])).to_bytes(
        4, "big"
    )
    with Image.open(io.BytesIO(bytes(content))) as image:
        image.verify()  # no error
    with pytest.raises(parquet.ImageError, match="cannot be decoded as an image"):
        parquet.check_image(bytes(content))


@pytest.fixture
def data(tmp_path) -> Path:
    folder = tmp_path / "project" / "data"
    shutil.copytree(SAMPLE, folder)
    return folder


def product_image(data: Path) -> Path:
    return data / "images" / "product_images" / f"{PRODUCT}.jpg"


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda jpeg: jpeg[: len(jpeg) * 2 // 3], "cannot be decoded as an image (image file is truncated"),
        (lambda jpeg: encoded(photo(), "PNG")[:3000], "cannot be decoded as an image ("),
        (lambda jpeg: jpeg[:2] + b"\xff\xc0\x00\x03" + jpeg[2:], "cannot be decoded as an image ("),
    ],
    ids=["JPEG cut at two thirds", "PNG cut short", "JPEG with a broken marker"],
)
def test_every_damaged_image_is_refused_naming_its_file(data, tmp_path, capsys, damage, reason):
    original = product_image(data).read_bytes()
    assert decodes_whole(original)
    product_image(data).write_bytes(damage(original))
    assert not decodes_whole(product_image(data).read_bytes())
    out = tmp_path / "out"
    assert run_cli(["export", "mipr", str(out), "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"mmrhub export: error: corpus item_id={PRODUCT}: image {product_image(data)} {reason}"), err
    assert err.endswith("Replace or remove that file.") and not out.exists()


# --- opening the files --------------------------------------------------------------------------------------------


def test_a_plain_file_is_read_with_one_open_and_no_link_lookup(data, monkeypatch):
    parquet.real_folder(str(product_image(data).parent))  # folders are resolved once, before
    parquet.real_folder(str(data))
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, flags, *a: opened.append((path, flags)) or real_open(path, flags, *a))
    monkeypatch.setattr(os.path, "islink", lambda path: pytest.fail("islink called"))
    monkeypatch.setattr(os, "lstat", lambda path: pytest.fail("lstat called"))
    content = parquet.read_file(str(product_image(data)), str(data))
    assert content == product_image(data).read_bytes()
    assert len(opened) == 1 and opened[0][1] & os.O_NOFOLLOW


def test_links_are_followed_only_inside_the_data_folder(data, tmp_path):
    image = product_image(data)
    other = image.parent / "copy.jpg"
    shutil.copy(image, other)
    image.unlink()
    image.symlink_to(other)
    assert parquet.read_file(str(image), str(data)) == other.read_bytes()
    hop = image.parent / "hop.jpg"
    hop.symlink_to(image)  # a link to a link
    assert parquet.read_file(str(hop), str(data)) == other.read_bytes()
    secret = tmp_path / "secret.jpg"
    shutil.copy(other, secret)
    other.unlink()
    other.symlink_to(secret)
    with pytest.raises(parquet.ImageError, match=f"resolves to {secret}, outside the data folder {data}"):
        parquet.read_file(str(hop), str(data))
    with pytest.raises(OSError) as caught:
        read_regular(str(other), follow=False)
    assert caught.value.errno == errno.ELOOP


def test_a_folder_or_a_fifo_is_not_read(data):
    image = product_image(data)
    image.unlink()
    image.mkdir()
    with pytest.raises(parquet.ImageError, match=r"^not a regular file \(a folder\); expected a file to read\.$"):
        parquet.read_file(str(image), str(data))
    image.rmdir()
    os.mkfifo(image)  # opened without waiting for a writer
    with pytest.raises(parquet.ImageError, match=r"^not a regular file \(a FIFO\); expected a file to read\.$"):
        parquet.read_file(str(image), str(data))


def test_a_file_that_grows_while_read_is_read_to_its_end(tmp_path, monkeypatch):
    path = tmp_path / "a.bin"
    path.write_bytes(b"x" * 10)
    real_fstat = os.fstat

    def stale(fd):  # the size of before the file grew
        status = real_fstat(fd)
        return os.stat_result((status.st_mode, *status[1:6], 4, *status[7:]))

    monkeypatch.setattr(os, "fstat", stale)
    assert read_regular(str(path)) == b"x" * 10


def test_a_loop_of_links_read_whole_is_named_in_one_line(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(InputError, match=r"a: a loop of symbolic links \(each leads to the next"):
        read_regular(str(tmp_path / "a"))
