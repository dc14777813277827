"""Read a run of any supported format, from a file or standard input ('-'), telling the format from the first bytes."""

import csv
import io
from functools import partial

import pyarrow as pa

from mmr_inputs import InputError
from mmr_inputs import first_line
from mmr_inputs import line_of
from mmr_inputs import read_utf8
from mmrhub.scoring.runs.kaggle import read_kaggle
from mmrhub.scoring.runs.official_json import read_json
from mmrhub.scoring.runs.ranx_dict import read_dict
from mmrhub.scoring.runs.run import FORMATS
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.runs.source import BOM
from mmrhub.scoring.runs.source import RunSource
from mmrhub.scoring.runs.trec import ORDERS
from mmrhub.scoring.runs.trec import read_trec


def read_run(path, trec_order: str = "score") -> Run:
    """Read a run ('-': standard input), telling its format from its first bytes (a BOM is skipped); a refusal
    names the format assumed. ``trec_order``: how TREC lines are ordered ('score' as trec_eval, or 'rank')."""
    if trec_order not in ORDERS:
        raise ValueError(f"trec_order must be one of {', '.join(ORDERS)}, got {trec_order!r}")
    try:
        source = RunSource.of(path)
    except OSError as err:
        raise RunError(f"{path}: cannot read the run file ({err.strerror or err}).") from None
    except InputError as err:
        raise RunError(str(err)) from None
    return read_source(source, trec_order)


def read_run_bytes(data: bytes, name: str, trec_order: str = "score") -> Run:
    """Read a run held in memory (``name``: how messages call it), as ``read_run`` reads a file of these bytes."""
    try:
        source = RunSource(name, read_utf8(name, io.BytesIO(data)))
    except InputError as err:
        raise RunError(str(err)) from None
    return read_source(source, trec_order)


def read_source(source: RunSource, trec_order: str) -> Run:
    """The run ``source`` holds, in the format its first bytes tell."""
    try:
        head = source.head()
    except OSError as err:
        raise RunError(f"{source.name}: cannot read the run file ({err.strerror or err}).") from None
    except InputError as err:
        raise RunError(str(err)) from None
    bom = len(BOM) if head.startswith(BOM) else 0
    if not head[bom:].strip():
        raise RunError(f"{source.name}: the run is empty.")
    kind = detect_format(head[bom:], source.name)
    trec = partial(read_trec, order=trec_order)
    readers = {"json": read_json, "dict": read_dict, "trec": trec, "kaggle": read_kaggle}
    try:
        run = readers[kind](source, bom)
    except (RunError, InputError) as err:
        raise RunError(f"{err} (read as {FORMATS[kind]})") from None
    pa.default_memory_pool().release_unused()  # the reader's freed buffers, which pyarrow's pool would keep
    return run


def detect_format(data: bytes, name: str = "the run") -> str:
    """'json', 'dict', 'kaggle' or 'trec', from the run's first bytes; a first line that fits none of them but looks
    like another format (a comment, a CSV of other columns) is refused by name, not read as TREC."""
    stripped = data.lstrip()
    if stripped[:1] == b"[":
        return "json"
    if stripped[:1] == b"{":
        return "dict"
    first = first_line(stripped).decode("utf-8", "replace").strip()
    if len(first.split()) == 6:
        return "trec"
    line = line_of(data, len(data) - len(stripped))
    if first.startswith(("//", "/*", "#")):
        raise RunError(f"{name}: line {line} is a comment ({first[:20]!r}); no run format has comments.")
    cells = next(csv.reader([first]), [])
    header = [cell.strip().lower() for cell in cells]
    if header[-2:] == ["question_id", "passage_id"] or (len(cells) in (2, 3) and cells[-1].strip().startswith("[")):
        return "kaggle"
    if ";" in first and "," not in first:
        raise RunError(
            f"{name}: line {line}: fields separated by ';' ({first[:40]!r}); expected {FORMATS['kaggle']}, "
            "separated by ','."
        )
    if len(cells) > 1:
        raise RunError(
            f"{name}: line {line}: a CSV of {len(cells)} columns ({first[:40]!r}); expected {FORMATS['kaggle']}, "
            "headed question_id,passage_id or without a header."
        )
    return "trec"  # its reader names the line that is not six fields
