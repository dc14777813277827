"""The split screenshot zip read in place: boundaries, byte equality, bad parts, untrusted members, image bombs."""

import io
import os
import random
import re
import stat
import struct
import subprocess
import sys
import zipfile
import zlib

import fsspec
import PIL.Image
import pytest
from _m2kr_helpers import PASSAGE_PARTS
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import copy_sample
from _m2kr_helpers import joined_bytes
from _m2kr_helpers import png_bytes
from _m2kr_helpers import prepare
from _m2kr_helpers import replace_passage_members
from _m2kr_helpers import unsplit_zip
from _m2kr_helpers import write_split
from _m2kr_helpers import zip_bytes
from datasets.utils.file_utils import xopen

import m2kr
import m2kr_archive

PARTS = [str(SAMPLE / part) for part in PASSAGE_PARTS]


def _parts_file(paths=PARTS):
    fs = fsspec.filesystem("file")
    return m2kr_archive.open_parts(fs, paths)


STANDALONE = """
import sys, fsspec, m2kr_archive
print(fsspec.get_filesystem_class("splitzip").__module__, "datasets" in sys.modules)
"""


def test_the_module_stands_alone_and_m2kr_shares_its_error_class():
    # Registered on import, without datasets: what a spawned DataLoader worker gets through the entry point.
    folder = os.path.dirname(m2kr_archive.__file__)
    result = subprocess.run([sys.executable, "-c", STANDALONE], cwd=folder, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["m2kr_archive", "False"]
    assert m2kr.M2krDataError is m2kr_archive.M2krDataError
    assert fsspec.get_filesystem_class("splitzip") is m2kr_archive.SplitZipFileSystem


def test_members_span_every_part_boundary_and_read_back_exactly():
    archive = unsplit_zip()
    sizes = [(SAMPLE / part).stat().st_size for part in PASSAGE_PARTS]
    boundaries = [sum(sizes[: index + 1]) for index in range(len(sizes) - 1)]
    for boundary in boundaries:
        spanning = [
            info
            for info in archive.infolist()
            if info.header_offset < boundary < info.header_offset + 30 + len(info.filename) + info.compress_size
        ]
        assert len(spanning) == 1, boundary
        with fsspec.open(m2kr_archive.archive_url(spanning[0].filename, PARTS), "rb") as f:
            assert f.read() == archive.read(spanning[0])
        with xopen(m2kr_archive.archive_url(spanning[0].filename, PARTS), "rb") as f:
            assert PIL.Image.open(f).size == (48, 32)


def test_every_member_has_the_bytes_of_the_unsplit_zip():
    archive = unsplit_zip()
    fs = fsspec.filesystem(m2kr_archive.PROTOCOL, fo="|".join(PARTS))
    members = [info.filename for info in archive.infolist()]
    assert len(members) == 300 and {info.compress_type for info in archive.infolist()} == {0, 8}
    assert {name: fs.cat_file(name) for name in members} == {name: archive.read(name) for name in members}
    assert fs.info("Web_Image/A27558.png")["size"] == archive.getinfo("Web_Image/A27558.png").file_size
    assert len(fs.ls("Web_Image", detail=False)) == 300


def test_parts_file_reads_like_the_joined_bytes():
    joined = joined_bytes()
    rng = random.Random(7)
    with _parts_file() as virtual:
        assert virtual.seek(0, 2) == len(joined)
        for _ in range(200):
            start, count = rng.randrange(len(joined)), rng.randrange(1, 70_000)
            virtual.seek(start)
            assert virtual.read(count) == joined[start : start + count]
        virtual.seek(-10, 2)
        assert virtual.read() == joined[-10:] and virtual.read(5) == b""
        with pytest.raises(ValueError, match="negative seek position -1"):
            virtual.seek(-1)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_member_files_seek_and_read_in_pieces(compression):
    archive = unsplit_zip()
    info = next(info for info in archive.infolist() if info.compress_type == compression)
    expected = archive.read(info)
    with fsspec.open(m2kr_archive.archive_url(info.filename, PARTS), "rb") as f:
        assert f.read(10) == expected[:10] and f.tell() == 10
        f.seek(-5, 2)
        assert f.read() == expected[-5:] and f.read() == b""
        f.seek(3)
        assert f.read(7) + f.read() == expected[3:]


def test_unknown_member_is_file_not_found():
    with pytest.raises(FileNotFoundError, match="Web_Image/nope.png is not a member of .*Web_Image.zip.001"):
        fsspec.open(m2kr_archive.archive_url("Web_Image/nope.png", PARTS), "rb").open()


def test_missing_part_is_named(tmp_path):
    data_dir = copy_sample(tmp_path)
    (data_dir / "Web_Image.zip.002").unlink()
    looked = (
        f"looked in {data_dir / 'images'}/ (missing Web_Image.zip.001, Web_Image.zip.002, Web_Image.zip.003) "
        f"and {data_dir}/ (missing Web_Image.zip.002); pass images_dir= (--images-dir) the folder that holds them."
    )
    with pytest.raises(FileNotFoundError, match=re.escape(looked)):
        prepare("challenge_passage", data_dir, tmp_path / "cache")
    message = f"Archive part {re.escape(str(data_dir / 'Web_Image.zip.002'))} is missing."
    parts = "|".join(str(data_dir / part) for part in PASSAGE_PARTS)
    with pytest.raises(FileNotFoundError, match=message):
        fsspec.open(f"splitzip://Web_Image/A27558.png::{parts}", "rb").open()


@pytest.mark.parametrize("part", ["Web_Image.zip.001", "Web_Image.zip.002"])
def test_truncated_part_is_named(tmp_path, part):
    data_dir = copy_sample(tmp_path)
    path = data_dir / part
    full = path.stat().st_size
    path.write_bytes(path.read_bytes()[:-100])
    sizes = f"{full - 100:,} bytes where the other parts have {full:,}"
    message = f"Archive part {re.escape(str(path))} is truncated: {sizes}"
    with pytest.raises(m2kr_archive.M2krDataError, match=message):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def test_truncated_last_part_is_named(tmp_path):
    data_dir = copy_sample(tmp_path)
    path = data_dir / "Web_Image.zip.003"
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(m2kr_archive.M2krDataError, match=f"{re.escape(str(path))}: no zip end record at its end"):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def test_truncated_single_archive_is_named(tmp_path):
    data_dir = copy_sample(tmp_path)
    path = data_dir / "query_images.zip"
    path.write_bytes(path.read_bytes()[-4000:])  # the directory survives, the members before it do not
    with pytest.raises(m2kr_archive.M2krDataError, match=f"Archive {re.escape(str(path))} is truncated or corrupt"):
        prepare("challenge_data", data_dir, tmp_path / "cache")


def _symlink(name):
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def _deflated(name):
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


UNSAFE = [
    ("/etc/evil.png", png_bytes(), "has an absolute name"),
    ("Web_Image/../../evil.png", png_bytes(), "has a '..' component"),
    ("Web_Image/a::b.png", png_bytes(), "contains '::'"),
    (_symlink("Web_Image/link.png"), b"/etc/passwd", "is a symbolic link"),
    (_deflated("Web_Image/bomb.png"), bytes(300_000), "has a compression ratio of [0-9,]+, over the bound of 100"),
]


@pytest.mark.parametrize("member, data, problem", UNSAFE, ids=["absolute", "dotdot", "chain", "symlink", "ratio"])
def test_unsafe_members_are_refused(tmp_path, member, data, problem):
    data_dir = copy_sample(tmp_path)
    replace_passage_members(data_dir, extra=[(member, data)])
    name = member.filename if isinstance(member, zipfile.ZipInfo) else member
    message = f"Web_Image.zip.001 \\(\\+2 parts\\): member {re.escape(repr(name))} {problem}.*; refusing the archive"
    with pytest.raises(m2kr_archive.M2krDataError, match=message):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def test_encrypted_members_are_refused(tmp_path):
    data_dir = copy_sample(tmp_path)
    archive = unsplit_zip(data_dir)
    data = bytearray(zip_bytes([(info.filename, archive.read(info)) for info in archive.infolist()]))
    entry = zipfile.ZipFile(io.BytesIO(bytes(data))).start_dir  # the first central directory record
    data[entry + 8] |= 0x1  # its general purpose flags: bit 0, "encrypted"
    write_split(data_dir, bytes(data))
    message = "member 'Web_Image/Q5247669.png' is encrypted; refusing the archive"
    with pytest.raises(m2kr_archive.M2krDataError, match=message):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def test_members_over_the_size_bound_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(m2kr_archive, "MAX_MEMBER_BYTES", 1_000)
    data_dir = copy_sample(tmp_path)
    replace_passage_members(data_dir, extra=[("Web_Image/large.bmp", bytes(range(256)) * 8)])
    message = "member 'Web_Image/large.bmp' expands to 2,048 bytes, over the 1,000-byte bound; refusing"
    with pytest.raises(m2kr_archive.M2krDataError, match=message):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def _png_claiming(width, height) -> bytes:
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b"")


def test_pillow_decompression_bomb_guard_stays_on(tmp_path):
    data_dir = copy_sample(tmp_path)
    bomb = _png_claiming(20_000, 20_000)
    replace_passage_members(data_dir, transform=lambda name, data: bomb if name == "Web_Image/Q5247669.png" else data)
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    assert PIL.Image.MAX_IMAGE_PIXELS is not None
    with pytest.raises(PIL.Image.DecompressionBombError):
        dataset[0]
    assert dataset[1]["image"].size == (48, 32)
