"""Parquet shards for a Hub repo: external files embedded as bytes, sized the way ``datasets`` sizes them.

Row groups follow ``datasets``' own rule for the features at hand (the page size the viewer reads), shards stay
under ``MAX_SHARD_SIZE``, and the writer options (per-column compression, content-defined chunking, page index)
are those of ``Dataset.to_parquet`` on the installed ``datasets``. Local image files are read and checked in
threads (``ImageChecks``) while the writer writes, into the storage ``datasets.table.embed_table_storage`` gives.

The image files are untrusted: each must start with an image signature, and a local file (or archive) must lie
inside the data folder once links are followed.
"""

import errno
import io
import itertools
import json
import os
import shutil
import threading
import warnings
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from functools import lru_cache
from pathlib import Path
from typing import Iterator
from typing import Optional

import datasets
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datasets.features.features import require_storage_embed
from datasets.table import embed_table_storage
from datasets.utils import tqdm as hf_tqdm
from datasets.utils.file_utils import xopen
from datasets.utils.py_utils import convert_file_size_to_int
from PIL import Image

from mmr_inputs import InputError
from mmr_inputs import read_regular
from mmr_inputs import row_name
from mmr_remote import read_many
from mmrhub.cores import usable_cores
from mmrhub.export.jpeg_markers import decodes_without_error

MAX_SHARD_SIZE = datasets.config.MAX_SHARD_SIZE
_FILES_A_TASK = 16
_PYTHON_STEPS = threading.Lock()
_BINARY_BYTES = 2**31  # what a binary array's 32-bit offsets reach


# Leading bytes of the formats an image column may embed (what Pillow and the Hub's viewer decode).
IMAGE_SIGNATURES = {
    b"\xff\xd8\xff": "JPEG",
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"GIF87a": "GIF",
    b"GIF89a": "GIF",
    b"BM": "BMP",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
}


class ImageError(ValueError):
    """An image file that must not be embedded."""


@dataclass
class RowSource:
    """Where a split's rows come from, to check the files they name and to say which row is wrong."""

    config: str
    root: Optional[str] = None  # the local data folder every read file must lie in (None: remote data)
    id_column: Optional[str] = None  # the column naming a row in messages (None: its row number)

    def row(self, table: pa.Table, offset: int, index: int) -> str:
        """How a message names a row: by its id column, else by its number in the split (counted from 1)."""
        if self.id_column in table.column_names:
            return f"{self.id_column}={table[self.id_column][index].as_py()}"
        return row_name(offset + index)


@dataclass
class WrittenSplit:
    """What was written for one split of one config (paths relative to the repo root)."""

    files: list = field(default_factory=list)
    num_examples: int = 0
    num_bytes: int = 0
    download_size: int = 0


def writer_batch_size(features: datasets.Features, num_rows: int, num_bytes: int) -> int:
    """Rows per row group: ``datasets``' rule for these features, else its rule for this much data."""
    try:  # datasets >= 4
        from datasets.arrow_writer import get_writer_batch_size_from_data_size
        from datasets.arrow_writer import get_writer_batch_size_from_features
    except ImportError:  # datasets 3.x
        from datasets.io.parquet import get_writer_batch_size

        return get_writer_batch_size(features) or datasets.config.DEFAULT_MAX_BATCH_SIZE
    return get_writer_batch_size_from_features(features) or get_writer_batch_size_from_data_size(num_rows, num_bytes)


def portable_features(features: datasets.Features) -> dict:
    """``features.to_dict()`` with plain lists written as JSON lists, which ``datasets`` 3.x also reads
    (it has no ``List`` type and fails on ``{"_type": "List"}`` in a Parquet file's metadata)."""

    def convert(value):
        if isinstance(value, dict):
            plain_list = value.get("_type") == "List" and value.get("length", -1) == -1
            if plain_list and set(value) <= {"_type", "feature", "length"}:
                return [convert(value["feature"])]
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, list):
            return [convert(item) for item in value]
        return value

    return convert(features.to_dict())


def parquet_schema(features: datasets.Features) -> pa.Schema:
    """The Arrow schema the Parquet files are written with, datasets' features in its metadata."""
    metadata = {"huggingface": json.dumps({"info": {"features": portable_features(features)}})}
    return features.arrow_schema.with_metadata(metadata)


def writer_options(features: datasets.Features, schema: pa.Schema) -> dict:
    """The ``pq.ParquetWriter`` options ``Dataset.to_parquet`` uses on the installed ``datasets``."""
    options = {}
    try:  # datasets >= 4: embedded columns uncompressed and PLAIN, content-defined chunking, page index
        from datasets.arrow_writer import get_parquet_column_options
    except ImportError:
        return options
    options.update(get_parquet_column_options(features, schema))
    options["write_page_index"] = True
    if getattr(datasets.config, "DEFAULT_CDC_OPTIONS", None):
        options["use_content_defined_chunking"] = datasets.config.DEFAULT_CDC_OPTIONS
    return options


def file_name(path: str) -> str:
    """The name an embedded file keeps: the base name of the file itself, also inside a chained URL
    (``zip://dir/a.png::archive.zip`` -> ``a.png``, where ``os.path.basename`` would name the archive)."""
    return os.path.basename(path.split("::")[0].rstrip("/"))


def image_format(content: bytes) -> Optional[str]:
    """The image format a file's first bytes announce, or None."""
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "WebP"
    return next((name for magic, name in IMAGE_SIGNATURES.items() if content.startswith(magic)), None)


def check_image(content: bytes):
    """Refuse what a reader could not decode: no bytes, no image signature, or a file Pillow cannot decode whole
    (cut short, damaged, or over Pillow's decompression-bomb limit), as ``datasets.Image`` would decode it.

    Every file is opened by Pillow, which reads its header and checks its size against the bomb limit. A JPEG whose
    markers show that libjpeg decodes it without error (``jpeg_markers``: the usual camera or encoder file) is not
    decoded; any other JPEG is decoded at an eighth of its size (``draft``): libjpeg still reads every marker, table
    and scan, and its errors come from those, not from the inverse DCT or the colour conversion that the reduced
    size skips, so it refuses the same files (tests/export/test_image_checks.py damages JPEGs a thousand ways to
    hold both). Other formats are decoded whole: PNG's ``verify`` reads the chunks' CRCs but not the compressed
    pixels, which can be damaged under a valid CRC.
    """
    image = opened_to_decode(content)
    if image is not None:
        decoded(image, content)


_DECODING_ERRORS = (OSError, ValueError, SyntaxError, Image.DecompressionBombWarning, Image.DecompressionBombError)


def opened_to_decode(content: bytes) -> Optional[Image.Image]:
    """The image Pillow opens from ``content`` (its header read, its size checked against the bomb limit), ready to
    decode; None for a JPEG whose markers show it decodes. Refused: no bytes, no image signature, a header Pillow
    refuses. Pillow's open takes turns with other threads': ``warnings.catch_warnings`` is not thread-safe."""
    if not content:
        raise ImageError("is empty (0 bytes)")
    kind = image_format(content)
    if kind is None:
        raise ImageError(
            f"is not an image: it starts with {content[:8]!r}, not a JPEG, PNG, GIF, WebP, BMP or TIFF signature"
        )
    try:
        with _PYTHON_STEPS, warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)  # what a reader would be warned of
            image = Image.open(io.BytesIO(content))
        if kind == "JPEG" and image.format == "JPEG":
            if decodes_without_error(content):
                image.close()
                return None
            image.draft(image.mode, (1, 1))  # the smallest scale libjpeg decodes at
        return image
    except _DECODING_ERRORS as err:
        raise ImageError(f"cannot be decoded as an image ({err})") from None


def decoded(image: Image.Image, content: bytes) -> bytes:
    """``content``, once ``image`` (opened from it) decodes whole."""
    try:
        with image:
            image.load()
    except _DECODING_ERRORS as err:
        raise ImageError(f"cannot be decoded as an image ({err})") from None
    return content


class ImageChecks:
    """The threads that read and check image files. One takes the Python steps (reading a file, Pillow's open, the
    marker check), which hold the GIL: two threads taking them made the MIPR export slower (bench/README.md,
    "Export"). A thread a core decodes, with the GIL released. Files go to the reading thread 16 at a time: a Future
    of each file's own cost as much as its check. Remote files (archive members over HTTP or the Hub) are not read
    there one by one: ``read_ahead`` reads a whole split's ahead of the checks (``mmr_remote.read_many``: many
    requests in flight, neighbours joined), and the reading thread takes their bytes in order."""

    def __init__(self):
        self.reading = ThreadPoolExecutor(1)
        self.decoding = ThreadPoolExecutor(usable_cores())
        self.ahead = {}  # column -> the bytes (or error) of its remote files, in the order start() is given them

    def read_ahead(self, column: str, paths: list):
        """Start reading ``paths``, every remote file of ``column`` that ``start`` will be given, in that order."""
        self.ahead[column] = read_many(paths, on_error="return")

    def start(self, paths: list, root: Optional[str], column: Optional[str] = None) -> Iterator:
        """Each file in order, read and checked as it comes: its bytes, the error that refused it, or a Future of
        either while it decodes. ``root``: the folder every local file must lie in."""
        tasks = [paths[start : start + _FILES_A_TASK] for start in range(0, len(paths), _FILES_A_TASK)]
        arguments = itertools.repeat(root), itertools.repeat(column)
        return itertools.chain.from_iterable(self.reading.map(self.read_and_check, tasks, *arguments))

    def read_and_check(self, paths: list, root: Optional[str], column: Optional[str] = None) -> list:
        """One task of the reading thread: ``start``'s entries for these files."""
        entries = []
        for path in paths:
            try:
                if column in self.ahead and is_remote(path):
                    content = next(self.ahead[column])
                    if isinstance(content, Exception):
                        raise content
                else:
                    content = read_file(path, root)
                image = opened_to_decode(content)
                entries.append(content if image is None else self.decoding.submit(decoded, image, content))
            except Exception as err:  # kept in the file's place: the batch names the first
                entries.append(err)
        return entries

    def shutdown(self, cancel: bool = False):
        """Wait for every check; ``cancel``: drop those not started and wait for none (Ctrl-C, an error)."""
        for pool in (self.reading, self.decoding):  # reading first: it hands files to the decoding
            pool.shutdown(wait=not cancel, cancel_futures=cancel)


def is_remote(path: str) -> bool:
    """Whether reading ``path`` asks a server: a URL, or an archive member whose archive is a URL."""
    return local_file(path) is None


def files_to_read(storage: pa.Array) -> list:
    """The rows of an Image column's storage whose file is read: a path and no bytes."""
    paths = storage.field("path").to_pylist()
    data = storage.field("bytes").is_null().to_pylist()
    valid = storage.is_valid().to_pylist()
    return [i for i, (p, missing, ok) in enumerate(zip(paths, data, valid)) if ok and missing and p is not None]


def local_file(path: str) -> Optional[str]:
    """The local file that reading ``path`` opens: itself, or the archive of a chained URL (``zip://a::x.zip``)."""
    last = path.split("::")[-1]
    return last if "://" not in last else None


@lru_cache(maxsize=4096)
def real_folder(folder: str) -> str:
    """``os.path.realpath`` of a folder, once per folder: the images of a split share a few folders."""
    return os.path.realpath(folder)


def check_inside(real: str, root: str) -> str:
    """``real`` (a resolved path), refused unless it lies inside ``root``."""
    if not real.startswith(real_folder(root).rstrip(os.sep) + os.sep):
        raise ImageError(f"resolves to {real}, outside the data folder {root}")
    return real


def real_path(path: str) -> str:
    """``os.path.realpath(path)``, its folder resolved once per folder."""
    folder, name = os.path.split(path)
    real = os.path.join(real_folder(folder), name)
    return os.path.realpath(real) if os.path.islink(real) else real


def read_regular_image(path: str, follow: bool = True) -> bytes:
    """``read_regular``, a FIFO or a folder where an image should be refused as an ImageError (named with its row)."""
    try:
        return read_regular(path, follow)
    except InputError as err:
        raise ImageError(str(err).removeprefix(f"{path}: ")) from None


def read_inside(path: str, root: str) -> bytes:
    """The bytes of the local file ``path``, refused unless it resolves inside ``root``: its folder resolved (once
    per folder) and checked, the file opened without following a link (one ``open`` and one ``fstat``); a link is
    resolved and checked, and its target opened the same way, so the file read is the very one checked."""
    folder, name = os.path.split(path)
    real = check_inside(os.path.join(real_folder(folder), name), root)
    try:
        return read_regular_image(real, follow=False)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
    return read_regular_image(check_inside(os.path.realpath(real), root), follow=False)


def read_file(path: str, root: Optional[str]) -> bytes:
    """The file's bytes; with ``root``, only once it (or its archive) resolves inside ``root``."""
    local = local_file(path)
    if local == path and "::" not in path:
        return read_inside(path, root) if root is not None else read_regular_image(path)
    if root is not None and local is not None:
        check_inside(real_path(local), root)
    with xopen(path, "rb") as f:
        return f.read()


def binary_array(values: list) -> pa.Array:
    """``pa.array(values, pa.binary())``, built from one joined buffer when no value is missing and the values fit
    a binary array's 32-bit offsets: much faster on fresh memory (bench/README.md, "Export")."""
    lengths = [len(value) if value is not None else -1 for value in values]
    if -1 in lengths or sum(lengths) >= _BINARY_BYTES:
        return pa.array(values, pa.binary())
    offsets = pa.array([0, *itertools.accumulate(lengths)], pa.int32()).buffers()[1]
    return pa.Array.from_buffers(pa.binary(), len(values), [None, offsets, pa.py_buffer(b"".join(values))])


def start_embedding(
    table: pa.Table, features: datasets.Features, checks: ImageChecks, source: RowSource, offset: int = 0
):
    """The storage ``embed_table_storage(table)`` gives, with the files of top-level Image columns read in
    parallel, checked (inside the data folder, an image signature) and each keeping its own file name; the reads
    and checks start now, and the function returned gathers them into the batch (the writer writes one batch while
    the next one's files are read and checked). ``offset``: the batch's first row, for messages."""
    columns = [name for name, feature in features.items() if require_storage_embed(feature)]
    if any(not isinstance(features[name], datasets.Image) for name in columns):
        return lambda: embed_table_storage(table)
    started = {}
    for name in columns:
        storage = table[name].combine_chunks()
        paths = storage.field("path").to_pylist()
        data = storage.field("bytes").to_pylist()
        valid = storage.is_valid().to_pylist()
        todo = files_to_read(storage)
        contents = checks.start([paths[i] for i in todo], source.root, name)
        started[name] = (storage, paths, data, valid, todo, contents)

    def finish() -> pa.Table:
        arrays = {}
        for name, (storage, paths, data, valid, todo, contents) in started.items():

            def refuse(i: int, err: ImageError):
                where = f"{source.config} {source.row(table, offset, i)}: image {paths[i] or '(bytes)'}"
                raise ImageError(f"{where} {err}. Replace or remove that file.") from None

            for i in todo:
                content = next(contents)
                if isinstance(content, Future):
                    content = content.exception() or content.result()
                if isinstance(content, ImageError):
                    refuse(i, content)
                if isinstance(content, Exception):
                    raise content
                data[i] = content
            read = set(todo)
            for i, content in enumerate(data):  # bytes stored in the table itself
                try:
                    if i not in read and valid[i] and content is not None:
                        check_image(content)
                except ImageError as err:
                    refuse(i, err)
            names = [file_name(p) if p is not None else None for p in paths]
            arrays[name] = pa.StructArray.from_arrays(
                [binary_array(data), pa.array(names, pa.string())],
                ["bytes", "path"],
                mask=pc.invert(storage.is_valid()),
            )
        columns = [arrays.get(n, table[n]) for n in table.column_names]
        return pa.Table.from_arrays(columns, schema=features.arrow_schema)

    return finish


def _footer_reserve(schema: pa.Schema, row_groups: int) -> int:
    """Room kept for a shard's footer: the schema and its metadata, plus each row group's column and page index."""
    metadata = sum(len(key) + len(value) for key, value in (schema.metadata or {}).items())
    return 4096 + 2 * metadata + 2048 * len(schema) * (row_groups + 1)


def check_room(folder: Path, needed: int):
    """Fail before a write the disk cannot hold, rather than inside the Parquet writer."""
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise OSError(errno.ENOSPC, f"No space left on device: {free:,} bytes free, a row group needs {needed:,}")


def open_shard(path: Path) -> pa.NativeFile:
    """A shard file as Arrow's own file: the Parquet writer's writes then never wait for the GIL, which the image
    checks' threads hold (through a Python file object each write did: bench/README.md, "Export")."""
    return pa.OSFile(str(path), "wb")


def write_split(
    dataset: datasets.Dataset,
    repo_dir,
    config_name: str,
    split: str,
    max_shard_size=MAX_SHARD_SIZE,
    source: Optional[RowSource] = None,
) -> WrittenSplit:
    """Write ``dataset`` as ``<config_name>/<split>-NNNNN-of-NNNNN.parquet`` under ``repo_dir``.

    A shard is closed before the next row group (its embedded bytes, exactly) and the footer would take the file
    past ``max_shard_size``, so the shard count is only known at the end: shards get their names last.
    """
    repo_dir = Path(repo_dir)
    (repo_dir / config_name).mkdir(parents=True, exist_ok=True)
    features = dataset.features
    schema = parquet_schema(features)
    options = writer_options(features, schema)
    batch_size = writer_batch_size(features, len(dataset), dataset._estimate_nbytes())
    limit = convert_file_size_to_int(max_shard_size)
    rows = dataset.with_format("arrow")
    written = WrittenSplit(num_examples=len(dataset))
    source = source or RowSource(config_name)
    shards, sink, writer, groups = [], None, None, 0

    def close():
        if writer is not None:
            writer.close()
            sink.close()

    progress = hf_tqdm(total=len(dataset), unit=" rows", desc=f"Exporting {config_name}")
    checks = ImageChecks()
    for name, feature in features.items():
        if isinstance(feature, datasets.Image) and len(dataset):  # the split's remote files, read ahead of the checks
            chunks = rows.select_columns([name])[:][name].chunks  # the table's own buffers: no image bytes copied
            paths = []
            for storage in chunks:
                names = storage.field("path").to_pylist()
                paths += [names[i] for i in files_to_read(storage)]
            if any(is_remote(path) for path in paths):
                checks.read_ahead(name, [path for path in paths if is_remote(path)])
    try:
        # ``or [None]``: an empty split still gets one (empty) shard.
        offsets = list(range(0, len(dataset), batch_size)) or [None]

        def start(offset):
            if offset is None:
                return lambda: None
            return start_embedding(rows[offset : offset + batch_size], features, checks, source, offset)

        pending = start(offsets[0])
        for number, offset in enumerate(offsets):
            batch = pending()
            # the next batch's files are read and checked while this one is written
            pending = start(offsets[number + 1]) if number + 1 < len(offsets) else None
            size = 0 if batch is None else batch.nbytes
            check_room(repo_dir, size + _footer_reserve(schema, groups))
            if writer is None or (groups and sink.tell() + size + _footer_reserve(schema, groups) > limit):
                close()
                shards.append(repo_dir / config_name / f".{split}-{len(shards):05d}.parquet.tmp")
                sink = open_shard(shards[-1])
                writer, groups = pq.ParquetWriter(sink, schema=schema, **options), 0
            if batch is not None:
                writer.write_table(batch, row_group_size=batch_size)
                groups += 1
                written.num_bytes += size
                progress.update(batch.num_rows)
    except BaseException:
        # Ctrl-C or an error: drop the reads not started rather than wait for them all (a plain ``with`` would)
        checks.shutdown(cancel=True)
        raise
    else:
        checks.shutdown()
    finally:
        progress.close()
        close()
    for index, path in enumerate(shards):
        relative = f"{config_name}/{split}-{index:05d}-of-{len(shards):05d}.parquet"
        path.rename(repo_dir / relative)
        written.files.append(relative)
        written.download_size += (repo_dir / relative).stat().st_size
    return written
