"""A run uploaded to a board's page, made ready for the one reader: size-capped as sent and once decompressed,
written as plain UTF-8 into a private folder under the name it was uploaded with (its compression suffix dropped),
and its record (if one came with it) beside it, where a record belongs. Nothing uploaded is executed or unpickled:
runs are read as text by ``mmrhub.scoring.runs`` and records as JSON by ``records``."""

import os
import shutil
from pathlib import Path

from mmr_inputs import HEAD_SIZE
from mmr_inputs import InputError
from mmr_inputs import encoding_of
from mmr_inputs import open_regular
from mmr_inputs import read_utf8
from mmrhub.leaderboard.board import Board
from mmrhub.leaderboard.records import record_path

COMPRESSED = (".gz", ".bz2", ".xz")  # what mmr_inputs decompresses, dropped from the name the run is scored under
MAX_RECORD_BYTES = 1 << 20  # a run's record: a few kB as written


def plain_name(name: str) -> str:
    """The uploaded file's name without its compression suffix, and never a path (``a/../b`` is ``b``)."""
    name = Path(name.replace("\\", "/")).name or "run"
    for suffix in COMPRESSED:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name if name not in (".", "..") else "run"


def prepare(path, work: Path, board: Board, shown: str = "") -> Path:
    """The uploaded run at ``path`` as a plain UTF-8 file in ``work``, named ``plain_name(shown)``; an error naming
    ``shown`` (the name it was uploaded with) when it is too large, compressed past the bound, or not text."""
    shown = shown or Path(path).name
    size = _size(path, shown)
    if size > board.max_upload_bytes:
        raise InputError(
            f"{shown}: {size:,} bytes; this board takes runs of at most {board.max_upload_bytes:,} bytes (compress "
            "the run with gzip, bz2 or xz)."
        )
    target = work / plain_name(shown)
    with open_regular(path) as handle:
        encoding = encoding_of(shown, handle.read(HEAD_SIZE))
        handle.seek(0)
        if encoding in ("utf-8", "utf-8-sig"):  # the reader reads it as it is, byte-order mark included
            with open(target, "wb") as out:
                shutil.copyfileobj(handle, out)
        else:
            target.write_bytes(read_utf8(shown, handle, limit=board.max_decoded_bytes))
    return target


def prepare_record(path, run: Path, shown: str = "") -> Path:
    """The record uploaded with a run, put beside it (``RUN.meta.json``); an error naming ``shown`` when it is too
    large for a record."""
    shown = shown or Path(path).name
    size = _size(path, shown)
    if size > MAX_RECORD_BYTES:
        raise InputError(f"{shown}: {size:,} bytes; a run's record is a few kB (at most {MAX_RECORD_BYTES:,} here).")
    target = record_path(run)
    with open_regular(path) as handle, open(target, "wb") as out:
        shutil.copyfileobj(handle, out)
    return target


def _size(path, shown: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError as err:
        raise InputError(f"{shown}: cannot read the upload ({err.strerror or err}).") from None
