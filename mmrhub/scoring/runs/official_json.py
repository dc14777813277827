"""The official JSON run ``[{"qid": ..., "ranked": [{"did": ..., "score": ...}]}]``, read by pyarrow's JSON reader;
Python's json reads a refused file again to name the entry at fault."""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj

from mmr_inputs import load_json
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.runs.run import zero_based_offsets

_RANKED = pa.list_(pa.struct([("did", pa.string()), ("score", pa.float64())]))
_ENTRY = pa.struct([("qid", pa.string()), ("ranked", _RANKED)])
# The run inside a one-element array inside one object: text after the run's array (`[...], "x": 1`) then breaks
# the JSON, or makes a second element, instead of adding a member that the reader would pass over.
_JSON_SCHEMA = pa.schema([("run", pa.list_(pa.list_(_ENTRY)))])
_JSON_PREFIX, _JSON_SUFFIX = b'{"run": [', b"]}\n"


def read_json(source, bom: int) -> Run:
    """The official JSON run, each query in the order its list gives (the list is the ranking)."""
    # pyarrow reads JSON Lines; the whole array inside the one field of one line is exactly that. The run is read
    # once, into a buffer that already holds the wrapping, so the run costs its size plus its Arrow columns.
    size = source.size(bom)
    wrapped = bytearray(len(_JSON_PREFIX) + size + len(_JSON_SUFFIX))
    wrapped[: len(_JSON_PREFIX)], wrapped[len(wrapped) - len(_JSON_SUFFIX) :] = _JSON_PREFIX, _JSON_SUFFIX
    source.read_into(memoryview(wrapped)[len(_JSON_PREFIX) : len(_JSON_PREFIX) + size], bom)
    try:
        table = paj.read_json(
            pa.BufferReader(wrapped),
            read_options=paj.ReadOptions(block_size=len(wrapped) + 1, use_threads=False),
            parse_options=paj.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="ignore"),
        )
        del wrapped
        wrapping = table["run"].combine_chunks()
        run = wrapping.flatten()
        if len(wrapping) != 1 or wrapping.null_count or len(run) != 1 or run.null_count:
            raise pa.ArrowInvalid("not one array")
        entries = run.flatten()
        qids, ranked = pc.struct_field(entries, [0]), pc.struct_field(entries, [1])
        if entries.null_count or qids.null_count or ranked.null_count or ranked.values.null_count:
            raise pa.ArrowInvalid("nulls")
        dids = pc.struct_field(ranked.values, [0])
        if dids.null_count:
            raise pa.ArrowInvalid("null ids")
        qids.validate(full=True)  # pyarrow's JSON reader lets invalid UTF-8 through; this raises ArrowInvalid
        dids.validate(full=True)
    except pa.ArrowInvalid:  # numbers for ids, nulls, another shape: read again below, naming the entry
        return _read_json_slowly(source.name, source.read(bom))
    scores = pc.struct_field(ranked.values, [1])
    offsets = zero_based_offsets(ranked)
    rankings = pa.ListArray.from_arrays(offsets, dids)
    return Run(source.name, "json", qids, rankings, pa.ListArray.from_arrays(offsets, scores))


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
