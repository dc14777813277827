"""TREC runs (``qid Q0 docid rank score tag``), read column by column by pyarrow's CSV reader; odd lines are read
again line by line to name the one at fault. Each query is ordered as trec_eval orders it (score descending, then
docid descending, the rank column ignored), or by its rank column on request."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from mmr_inputs import decode
from mmr_inputs import first_line
from mmrhub.scoring.runs.order import in_trec_eval_order
from mmrhub.scoring.runs.order import queries_with_inversions
from mmrhub.scoring.runs.order import single_precision
from mmrhub.scoring.runs.order import trec_eval_sort
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError

ORDERS = ("score", "rank")  # trec_eval's order; the rank column's
_RANK_RANGE = (-(1 << 63), (1 << 63) - 1)  # the rank column is read as 64-bit integers
_TREC_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
_TREC_TYPES = {
    "qid": pa.dictionary(pa.int32(), pa.string()),
    "q0": pa.string(),
    "docid": pa.string(),
    "rank": pa.int64(),
    "score": pa.float64(),
    "tag": pa.string(),
}


def read_trec(source, bom: int, order: str = "score") -> Run:
    """``qid Q0 docid rank score tag`` lines; each query ordered as trec_eval orders it, or by its rank column
    (``order='rank'``)."""
    first = first_line(source.head()[bom:])
    options = pacsv.ParseOptions(delimiter="\t" if b"\t" in first else " ", quote_char=False, ignore_empty_lines=False)
    try:  # pyarrow's reader streams the file (and skips a BOM); a blank or odd line sends it to the slow path
        table = pacsv.read_csv(
            source.stream(),
            read_options=pacsv.ReadOptions(column_names=_TREC_COLUMNS, use_threads=False),
            parse_options=options,
            convert_options=pacsv.ConvertOptions(
                column_types=_TREC_TYPES, strings_can_be_null=False, include_columns=["qid", "docid", "rank", "score"]
            ),
        )
        if any(table[name].null_count for name in table.column_names):
            raise pa.ArrowInvalid("nulls")
    except pa.ArrowInvalid:
        return _read_trec_slowly(source.name, source.read(bom), order, bom)
    columns = table.columns
    del table
    for i, column in enumerate(columns):  # one column at a time, so a run is never held twice
        pa.default_memory_pool().release_unused()  # pyarrow's pool would keep freed memory from the OS
        columns[i] = column = column.combine_chunks()
    qids, dids, ranks, scores = columns
    lines = np.arange(1, len(dids) + 1, dtype=np.int32)
    return _trec_run(source.name, qids, dids, ranks.to_numpy(), scores, lines, order)


def _read_trec_slowly(path: str, data: bytes, order: str, bom: int) -> Run:
    qids, dids, ranks, scores, lines = [], [], [], [], []
    for number, line in enumerate(decode(path, data, start=bom).splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise RunError(f"{path}: line {number}: expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}")
        qid, _, did, rank, score, _ = fields
        try:
            ranks.append(int(rank))
        except ValueError:
            raise RunError(f"{path}: line {number}: rank {rank!r} is not an integer") from None
        if not _RANK_RANGE[0] <= ranks[-1] <= _RANK_RANGE[1]:
            raise RunError(f"{path}: line {number}: rank {rank!r} is out of range; expected a 64-bit integer")
        try:
            scores.append(float(score))
        except ValueError:
            raise RunError(f"{path}: line {number}: score {score!r} is not a number") from None
        qids.append(qid), dids.append(did), lines.append(number)
    return _trec_run(
        path,
        pa.array(qids, pa.string()),
        pa.array(dids, pa.string()),
        np.array(ranks, np.int64),
        pa.array(scores, pa.float64()),
        np.array(lines, np.int32),
        order,
    )


def _trec_run(path, qids, dids, ranks, scores, lines, order) -> Run:
    """Group lines by query (in order of first appearance), each query in trec_eval's order or its rank column's."""
    encoded = pc.dictionary_encode(qids)  # codes in order of first appearance
    unique, query = encoded.dictionary, encoded.indices.to_numpy()
    sort = _rank_sort(query, ranks) if order == "rank" else _score_sort(encoded.indices, query, scores, dids)
    if sort is not None:  # else the usual file: its columns are used as they are
        query, ranks, lines = query[sort], ranks[sort], lines[sort]
        dids, scores = pc.take(dids, pa.array(sort)), pc.take(scores, pa.array(sort))
    if order == "rank":
        repeated = np.flatnonzero((query[1:] == query[:-1]) & (ranks[1:] == ranks[:-1]))
        if len(repeated):
            at = repeated[0] + 1
            qid = unique[int(query[at])].as_py()
            raise RunError(f"{path}: line {lines[at]}: query {qid!r} has rank {ranks[at]} twice (--trec-order rank)")
    offsets = pa.array(np.concatenate([[0], np.cumsum(np.bincount(query, minlength=len(unique)))]), pa.int32())
    run = Run(
        path,
        "trec",
        unique,
        pa.ListArray.from_arrays(offsets, dids),
        pa.ListArray.from_arrays(offsets, scores),
        pa.ListArray.from_arrays(offsets, pa.array(lines)),
    )
    run.notes += _disagreement(path, order, query, ranks, scores)
    return run


def _rank_sort(query, ranks):
    """None if the lines are grouped by query in rank order, else the indices that make them so."""
    same_query = query[1:] == query[:-1]
    if (query[1:] >= query[:-1]).all() and ((np.diff(ranks) > 0) | ~same_query).all():
        return None
    return np.lexsort((ranks, query))


def _score_sort(codes, query, scores, dids):
    """None if the lines are grouped by query in trec_eval's order without ties, else the indices of that order."""
    score32 = single_precision(scores)
    return None if in_trec_eval_order(query, score32) else trec_eval_sort(codes, score32, dids)


def _disagreement(path, order, query, ranks, scores) -> list:
    """The note, if any, on the queries where scores and ranks contradict each other (a higher score at a worse
    rank). Ties are no contradiction: ranx and others number tied lines in their own order, not trec_eval's."""
    inverted = queries_with_inversions(query, ranks, single_precision(scores))
    if not inverted:
        return []
    if order == "rank":
        return [
            f"{path} is ordered by its rank column (--trec-order rank); its scores contradict it (a higher score at a "
            f"worse rank) in {inverted} queries."
        ]
    return [
        f"{path} is ordered by score as trec_eval does; its rank column contradicts the scores (a higher score at a "
        f"worse rank) in {inverted} queries; pass --trec-order rank to follow the rank column instead."
    ]
