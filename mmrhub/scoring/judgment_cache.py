"""Validated scoring tables kept between processes, so a second ``mmrhub evaluate`` skips reading and checking.

Each entry is a folder under ``$HF_HOME/mmrhub/truth/<key>/``: one Arrow IPC file per table and ``entry.json``,
which names the key and the tables. The key covers the bytes of every source file (xxh3-128) and this format's
version, never sizes or times: an edit is seen on any file system, whatever it does with modification times. An
entry whose ``entry.json`` does not name its key and tables (copied from another entry, cut short, damaged) is
rebuilt, never trusted. Entries are written aside and renamed into place; a cache that cannot be written
(read-only, full) is skipped, never an error.
"""

import json
import os
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import xxhash

from mmr_inputs import open_regular

FORMAT = 4  # bump when what is stored changes
MANIFEST = "entry.json"
_CHUNK = 1 << 23


def cache_root() -> Path:
    """``$HF_HOME/mmrhub/truth``, with HF_HOME defaulting as huggingface_hub's does (without importing it)."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface"
    return Path(os.environ.get("HF_HOME", default)) / "mmrhub" / "truth"


def content_hash(path: Path) -> str:
    """xxh3-128 of a regular file's bytes; anything else (a FIFO, a device, a folder) is refused by name."""
    with open_regular(str(path)) as handle:
        digest = xxhash.xxh3_128()
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def source_key(kind: str, paths) -> str:
    """The entry key of ``kind``'s tables read from ``paths``: their contents, in the order given, and FORMAT."""
    digest = xxhash.xxh3_128(json.dumps([FORMAT, kind]).encode())
    for path in paths:
        digest.update(content_hash(Path(path)).encode())
    return digest.hexdigest()


def load(key: str):
    """{table: {column: pa.Array}} of the entry ``key``, or None: absent, or an entry that does not vouch for
    itself (its ``entry.json`` names another key, or a table it lists cannot be read); it is then rebuilt."""
    folder = cache_root() / key
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("key") != key or not manifest.get("tables"):
            return None
        tables = {}
        for name in manifest["tables"]:
            with pa.memory_map(str(folder / f"{name}.arrow")) as source:
                table = ipc.open_file(source).read_all()
            tables[name] = {column: table[column].combine_chunks() for column in table.column_names}
        return tables
    except (OSError, ValueError, AttributeError, TypeError, pa.ArrowInvalid):
        return None


def save(key: str, tables: dict) -> None:
    """Write ``tables`` ({table: {column: pa.Array}}) as the entry ``key``, replacing an entry that failed
    ``load``; skipped if the cache is not writable."""
    folder = cache_root() / key
    work = folder.with_name(f".{key}.{uuid.uuid4().hex[:8]}")
    try:
        work.mkdir(parents=True)
        for name, columns in tables.items():
            table = pa.table(columns)
            with ipc.new_file(str(work / f"{name}.arrow"), table.schema) as writer:
                writer.write_table(table)
        manifest = json.dumps({"key": key, "tables": sorted(tables)})
        (work / MANIFEST).write_text(manifest, encoding="utf-8")
        if folder.exists():  # a damaged or foreign entry under this key: set it aside, then remove it
            stale = folder.with_name(f".{key}.stale.{uuid.uuid4().hex[:8]}")
            os.rename(folder, stale)
            shutil.rmtree(stale, ignore_errors=True)
        os.rename(work, folder)
    except OSError:  # read-only or full cache, or another process wrote the same entry first
        shutil.rmtree(work, ignore_errors=True)
