"""Fixtures for the M2KR tests: copies of the bundled sample to break, and independent readers of its files."""

import io
import shutil
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

import m2kr

SAMPLE = m2kr.SAMPLE_DIR
TABLE_FILE = "train-00000-of-00001.parquet"
PASSAGE_PARTS = m2kr.ARCHIVES["challenge_passage"]


def copy_sample(tmp_path: Path) -> Path:
    """A writable copy of the sample's tables and archives."""
    target = tmp_path / "m2kr"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns("baseline", "__pycache__"))
    return target


def source_rows(config: str, data_dir: Path = SAMPLE) -> list:
    """The rows of a config's Parquet file, read with pyarrow alone."""
    return pq.read_table(data_dir / config / TABLE_FILE).to_pylist()


def write_rows(data_dir: Path, config: str, rows: list, schema=None):
    schema = schema or m2kr.SOURCE_SCHEMAS[config]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), data_dir / config / TABLE_FILE)


def joined_bytes(data_dir: Path = SAMPLE, parts=PASSAGE_PARTS) -> bytes:
    """The unsplit zip: the parts concatenated."""
    return b"".join((data_dir / part).read_bytes() for part in parts)


def unsplit_zip(data_dir: Path = SAMPLE) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(joined_bytes(data_dir)))


def zip_bytes(members, compression=zipfile.ZIP_STORED) -> bytes:
    """A zip of ``(name, bytes)`` or ``(ZipInfo, bytes)`` members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def write_split(data_dir: Path, data: bytes, parts=PASSAGE_PARTS):
    """Split ``data`` at byte level like ``split -b``: equal parts, the last one shorter."""
    size = -(-len(data) // len(parts))
    for index, part in enumerate(parts):
        (data_dir / part).write_bytes(data[index * size : (index + 1) * size])


def replace_passage_members(data_dir: Path, extra=(), transform=None):
    """Rewrite the split screenshot zip: every member (optionally transformed) plus ``extra`` members."""
    source = unsplit_zip(data_dir)
    members = [(info.filename, source.read(info)) for info in source.infolist()]
    if transform:
        members = [(name, transform(name, data)) for name, data in members]
    write_split(data_dir, zip_bytes(members + list(extra)))


def png_bytes(size=(8, 6), color=(10, 200, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def prepare(config: str, data_dir: Path, cache_dir: Path, **kwargs):
    """Build a config with the builder class (not load()): a fresh cache per call."""
    builder = m2kr.M2kr(config_name=config, data_dir=str(data_dir), cache_dir=str(cache_dir), **kwargs)
    builder.download_and_prepare()
    return builder.as_dataset(split="train")
