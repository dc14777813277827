"""Validated scoring tables kept between processes, so a second ``mmrhub evaluate`` skips reading and checking.

Each entry is a folder ``$HF_HOME/mmrhub/truth/<key>/`` of ``mmr_cache``'s one format: one Arrow IPC file per table
and ``entry.json``, which names the key and each file's size and hash, checked on every read. The key covers the
bytes of every source file (xxh3-128) and this format's version, never sizes or times: an edit is seen on any file
system, whatever it does with modification times. An entry that does not vouch for its key and bytes (copied from
another entry, a table swapped in from another, edited in place, cut short) is rebuilt, never served. Entries are
written aside and swapped in (``mmrhub.writing.new_entry``); a cache that cannot be written (read-only, full) is
skipped, never an error.
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

import mmr_cache
from mmr_inputs import open_regular
from mmrhub.writing import new_entry

FORMAT = 5  # bump when what is stored changes


def cache_root() -> Path:
    """``$HF_HOME/mmrhub/truth``."""
    return mmr_cache.cache_root("truth")


def source_key(kind: str, paths) -> str:
    """The entry key of ``kind``'s tables read from ``paths``: their contents, in the order given, and FORMAT. A
    FIFO, device or folder among them is refused by name."""
    hashes = []
    for path in paths:
        open_regular(str(path)).close()  # names what is not a regular file, without waiting on a FIFO
        hashes.append(mmr_cache.content_hash(path))
    return mmr_cache.key_of(FORMAT, kind, hashes)


def load(key: str):
    """{table: {column: pa.Array}} of the entry ``key``, or None: absent, or an entry that does not vouch for its
    key and bytes; it is then rebuilt."""
    folder = cache_root() / key
    entry = mmr_cache.read_entry(folder, key)
    if entry is None or not isinstance(entry[0], list) or not entry[0]:
        return None
    try:
        tables = {}
        for name in entry[0]:
            with pa.memory_map(str(folder / f"{name}.arrow")) as source:
                table = ipc.open_file(source).read_all()
            tables[name] = {column: table[column].combine_chunks() for column in table.column_names}
        return tables
    except (OSError, ValueError, TypeError, pa.ArrowInvalid):
        return None


def save(key: str, tables: dict) -> None:
    """Write ``tables`` ({table: {column: pa.Array}}) as the entry ``key``, replacing an entry that failed
    ``load``; skipped if the cache is not writable."""
    try:
        with new_entry(cache_root() / key, key, meta=sorted(tables)) as work:
            for name, columns in tables.items():
                table = pa.table(columns)
                with ipc.new_file(str(work / f"{name}.arrow"), table.schema) as writer:
                    writer.write_table(table)
    except OSError:  # read-only or full cache
        pass
