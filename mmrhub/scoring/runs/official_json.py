"""The official JSON run ``[{"qid": ..., "ranked": [{"did": ..., "score": ...}]}]``, read by pyarrow's JSON reader;
Python's json reads a refused file again to name the entry at fault."""

import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj

from mmr_inputs import load_json
from mmrhub.cores import usable_cores
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.runs.run import zero_based_offsets

_RANKED = pa.list_(pa.struct([("did", pa.string()), ("score", pa.float64())]))
_ENTRY = pa.struct([("qid", pa.string()), ("ranked", _RANKED)])
# The run inside a one-element array inside one object: text after the run's array (`[...], "x": 1`) then breaks
# the JSON, makes a second element, or (`[...]], "x": [[1]`) a second column, never a member passed over.
_JSON_SCHEMA = pa.schema([("run", pa.list_(pa.list_(_ENTRY)))])
_JSON_PREFIX, _JSON_SUFFIX = b'{"run": [', b"]}\n"
# A large run is parsed in pieces on every core: cut where one entry ends and the next begins (JSON's whitespace
# only, a separator no longer than the wrapping a piece gets), each piece at least _PIECE_BYTES.
_PIECE_PREFIX, _PIECE_SUFFIX = b'{"run": [[', b"]]}\n"
_CUT = re.compile(rb'\}([ \t\n\r]{0,6},[ \t\n\r]{0,6}\{)[ \t\n\r]*"(?:qid|ranked)"')
_PIECE_BYTES = 1 << 22
_WORKERS = usable_cores()


def read_json(source, bom: int) -> Run:
    """The official JSON run, each query in the order its list gives (the list is the ranking)."""
    try:
        columns = _read_in_pieces(source, bom) or _parse(_read_wrapped(source, bom))
    except pa.ArrowInvalid:  # numbers for ids, nulls, another shape: read again below, naming the entry
        return _read_json_slowly(source.name, source.read(bom))
    return Run(source.name, "json", *columns)


def _read_wrapped(source, bom: int) -> memoryview:
    """The whole run inside the wrapping, read once into a buffer that already holds it, so that the run costs its
    size plus its Arrow columns."""
    size = source.size(bom)
    wrapped = _buffer(len(_JSON_PREFIX) + size + len(_JSON_SUFFIX))
    wrapped[: len(_JSON_PREFIX)], wrapped[len(wrapped) - len(_JSON_SUFFIX) :] = _JSON_PREFIX, _JSON_SUFFIX
    source.read_into(wrapped[len(_JSON_PREFIX) : len(_JSON_PREFIX) + size], bom)
    return wrapped


def _buffer(size: int) -> memoryview:
    """``size`` writable bytes, left as they are: the file fills them (a bytearray would write zeros first; the
    cost is in bench/README.md)."""
    return memoryview(np.empty(size, np.uint8))


def _parse(wrapped) -> tuple:
    """(query ids, rankings, scores) of one wrapped piece (``{"run": [`` + the run's array + ``]}``, or a slice of
    it between two entries inside ``[[`` and ``]]``); ArrowInvalid unless it is valid JSON holding exactly one list
    of entries, each with a string id and a list of objects with a string "did", and nothing beside the list."""
    # pyarrow reads JSON Lines; the piece inside the one field of one line is exactly that. Fields outside the
    # format are inferred, not dropped, so that text closing the list early and adding a key ('[...]], "x": [[')
    # shows as a second column.
    table = paj.read_json(
        pa.BufferReader(pa.py_buffer(wrapped)),
        read_options=paj.ReadOptions(block_size=len(wrapped) + 1, use_threads=False),
        parse_options=paj.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="infer"),
    )
    if table.num_columns != 1:
        raise pa.ArrowInvalid("more than the run")
    wrapping = table["run"].combine_chunks()
    run = wrapping.flatten()
    if len(wrapping) != 1 or wrapping.null_count or len(run) != 1 or run.null_count:
        raise pa.ArrowInvalid("not one array")
    entries = run.flatten()
    qids, ranked = pc.struct_field(entries, [0]), pc.struct_field(entries, [1])
    items = ranked.flatten()
    if entries.null_count or qids.null_count or ranked.null_count or items.null_count:
        raise pa.ArrowInvalid("nulls")
    dids = pc.struct_field(items, [0])
    if dids.null_count:
        raise pa.ArrowInvalid("null ids")
    qids.validate(full=True)  # pyarrow's JSON reader lets invalid UTF-8 through; this raises ArrowInvalid
    dids.validate(full=True)
    scores = pc.struct_field(items, [1])
    offsets = zero_based_offsets(ranked)
    return qids, pa.ListArray.from_arrays(offsets, dids), pa.ListArray.from_arrays(offsets, scores)


def _read_in_pieces(source, bom: int):
    """The columns of a run large enough to share out, parsed a piece per core; None for a run read whole.

    The run is cut between two entries (``}, {"qid"``) into pieces that are wrapped in place, each inside
    ``{"run": [[`` and ``]]}`` (the first and the last keep the run's own brackets). A piece parses only if it
    starts and ends outside any string, at the run's level, so when every piece parses to one list and nothing
    else, the pieces joined by commas are the run: the whole file is valid and its entries are theirs, in order.
    A cut that is not between entries, or a file that is not valid, fails some piece, and the run is read whole.
    """
    size = source.size(bom)
    count = min(_WORKERS * 4, size // _PIECE_BYTES)
    if count < 2:
        return None
    room = count * (len(_PIECE_PREFIX) + len(_PIECE_SUFFIX))
    view = _buffer(len(_JSON_PREFIX) + size + room)
    base = start = len(_JSON_PREFIX)
    source.read_into(view[base : base + size], bom)
    pieces = []  # (first byte, end) of each piece in the buffer as read
    for number in range(1, count):
        found = _CUT.search(view, max(start, base + size * number // count), base + size)
        if found is None:
            break
        pieces.append((start, found.start() + 1))
        start = found.end(1) - 1  # the next entry's "{"
    if not pieces:
        return None
    pieces.append((start, base + size))
    # Where each piece goes: after the previous piece, its "]]}\n" and this piece's '{"run": [['. A separator
    # (", " and the spaces around it) is never longer than what the wrapping adds, so every piece moves right
    # (or stays), and moving them from the last one keeps what is still to move intact.
    places, end = [pieces[0][0]], pieces[0][1]
    for first, last in pieces[1:]:
        places.append(end + len(_PIECE_SUFFIX) + len(_PIECE_PREFIX))
        end = places[-1] + last - first
    for (first, last), place in reversed(list(zip(pieces, places))):
        view[place : place + last - first] = view[first:last]
    wrapped = []
    for number, ((first, last), place) in enumerate(zip(pieces, places)):
        prefix = _JSON_PREFIX if number == 0 else _PIECE_PREFIX
        suffix = _JSON_SUFFIX if number == len(pieces) - 1 else _PIECE_SUFFIX
        end = place + last - first
        view[place - len(prefix) : place] = prefix
        view[end : end + len(suffix)] = suffix
        wrapped.append(view[place - len(prefix) : end + len(suffix)])
    with ThreadPoolExecutor(_WORKERS) as pool:  # the parser lets go of the GIL
        parsed = list(pool.map(_try_parse, wrapped))
    del wrapped, view  # before the pieces' columns are joined
    if any(columns is None for columns in parsed):
        return None
    qids, rankings, scores = zip(*parsed)
    return pa.concat_arrays(list(qids)), _joined(rankings), _joined(scores)


def _joined(lists) -> pa.ListArray:
    """List arrays whose offsets start at 0 as one, their values and offsets joined directly: pyarrow's
    ``concat_arrays`` of lists is slower on a top-1000 run's ids than of their values (bench/README.md)."""
    starts = np.cumsum([0] + [len(part.values) for part in lists])
    offsets = [part.offsets.to_numpy()[:-1] + start for part, start in zip(lists, starts)]
    offsets.append(starts[-1:])
    return pa.ListArray.from_arrays(
        pa.array(np.concatenate(offsets), pa.int32()), pa.concat_arrays([part.values for part in lists])
    )


def _try_parse(wrapped):
    """``_parse``, or None where it refuses the piece."""
    try:
        return _parse(wrapped)
    except pa.ArrowInvalid:
        return None


def _read_json_slowly(path: str, data: bytes) -> Run:
    """Python's json, to name what pyarrow refused: the entry and position at fault."""
    entries = load_json(path, data)
    query_ids, rankings, scores, problems = [], [], [], []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or "qid" not in entry or "ranked" not in entry:
            raise RunError(f'{where}: expected an object with "qid" and "ranked"')
        qid = _id(entry["qid"])
        if qid is None:
            raise RunError(f'{where}: "qid" must be a string or an integer, got {entry["qid"]!r}')
        if not isinstance(entry["ranked"], list):
            raise RunError(f'{where} (query {qid!r}): "ranked" must be a list')
        dids = [_id(item.get("did")) if isinstance(item, dict) else None for item in entry["ranked"]]
        if None in dids:
            position = dids.index(None) + 1
            raise RunError(
                f'{where} (query {qid!r}) position {position}: expected {{"did": "<id>", "score": <number>}}'
                f", got {entry['ranked'][position - 1]!r}"
            )
        row_scores = [item.get("score") for item in entry["ranked"]]
        for position, score in enumerate(row_scores, 1):
            if not _is_number(score):
                problems.append(
                    f"query {qid!r} position {position} (entry {number}): score {score!r} is not a finite number"
                )
        query_ids.append(qid)
        rankings.append(dids)
        scores.append([score if _is_number(score) else None for score in row_scores])
    return Run(
        path,
        "json",
        pa.array(query_ids, pa.string()),
        pa.array(rankings, pa.list_(pa.string())),
        pa.array(scores, pa.list_(pa.float64())),
        problems=problems,
    )


def _id(value):
    """An id as a string: a JSON string, or an integer written as a number; None for anything else."""
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _is_number(value) -> bool:
    """A score may be absent (None) or a JSON number; booleans and strings are not scores."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
