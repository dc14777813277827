"""Validated scoring tables kept between processes, so a second ``mmrhub evaluate`` skips reading and checking.

Each entry is a folder of Arrow IPC files under ``$HF_HOME/mmrhub/truth/<key>/``, one per table. The key covers
the source files as the builders' cache keys do (resolved path, size, mtime_ns, ctime_ns and inode, so an edit is
noticed even with its modification time restored) and this format's version. Entries are written aside and
renamed into place; a cache that cannot be written (read-only, full) is skipped, never an error.
"""

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

FORMAT = 4  # bump when what is stored changes


def cache_root() -> Path:
    """``$HF_HOME/mmrhub/truth``, with HF_HOME defaulting as huggingface_hub's does (without importing it)."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface"
    return Path(os.environ.get("HF_HOME", default)) / "mmrhub" / "truth"


def source_key(kind: str, paths) -> str:
    state = []
    for path in sorted(Path(p).resolve() for p in paths):
        info = path.stat()
        state.append([str(path), info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino])
    return hashlib.sha256(json.dumps([FORMAT, kind, state]).encode()).hexdigest()[:32]


def load(key: str):
    """{table: {column: pa.Array}}, or None if absent or unreadable."""
    folder = cache_root() / key
    try:
        tables = {}
        for path in folder.glob("*.arrow"):
            with pa.memory_map(str(path)) as source:
                table = ipc.open_file(source).read_all()
            tables[path.stem] = {name: table[name].combine_chunks() for name in table.column_names}
        return tables or None
    except (OSError, pa.ArrowInvalid):
        return None


def save(key: str, tables: dict) -> None:
    """Write ``tables`` ({table: {column: pa.Array}}) as the entry ``key``; skipped if the cache is not writable."""
    folder = cache_root() / key
    work = folder.with_name(f".{key}.{uuid.uuid4().hex[:8]}")
    try:
        work.mkdir(parents=True)
        for name, columns in tables.items():
            table = pa.table(columns)
            with ipc.new_file(str(work / f"{name}.arrow"), table.schema) as writer:
                writer.write_table(table)
        os.rename(work, folder)
    except OSError:  # read-only or full cache, or another process wrote the same entry first
        shutil.rmtree(work, ignore_errors=True)
