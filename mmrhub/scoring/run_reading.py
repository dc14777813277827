"""Read a run file of any supported format, telling the format from the first bytes."""

import csv

import pyarrow as pa

from mmrhub.scoring.run import FORMATS
from mmrhub.scoring.run import Run
from mmrhub.scoring.run import RunError
from mmrhub.scoring.run_bytes import BOM
from mmrhub.scoring.run_json import read_json
from mmrhub.scoring.run_kaggle import read_kaggle
from mmrhub.scoring.run_trec import read_trec



def read_run(path) -> Run:
    """Read a run, telling its format from its first bytes (a BOM is skipped); a refusal names the format assumed."""
    path = str(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as err:
        raise RunError(f"{path}: cannot read the run file ({err.strerror or err}).") from None
    bom = len(BOM) if head.startswith(BOM) else 0
    if not head[bom:].strip():
        raise RunError(f"{path}: the run file is empty.")
    kind = detect_format(head[bom:])
    try:
        run = {"json": read_json, "trec": read_trec, "kaggle": read_kaggle}[kind](path, bom)
    except RunError as err:
        raise RunError(f"{err} (read as {FORMATS[kind]})") from None
    pa.default_memory_pool().release_unused()  # the reader's freed buffers, which pyarrow's pool would keep
    return run



def detect_format(data: bytes) -> str:
    """'json', 'kaggle' or 'trec', from the file's first bytes."""
    stripped = data.lstrip()
    if stripped[:1] in (b"[", b"{"):
        return "json"
    first = stripped.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    cells = next(csv.reader([first]), [])
    header = [cell.strip().lower() for cell in cells]
    if header[-2:] == ["question_id", "passage_id"] or (len(cells) in (2, 3) and cells[-1].strip().startswith("[")):
        return "kaggle"
    return "trec"

