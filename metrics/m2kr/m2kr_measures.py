"""Vectorised M2KR measures: positives are prepared once, each run is one (queries x k) lookup.

Numpy/pyarrow only, so the metric folder stays self-contained.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .lookup import PairIndex
from .lookup import arrow_strings
from .lookup import first_repeat
from .lookup import flat_cells
from .lookup import joined_strings

DEFAULT_K = (1, 3, 5)
# Variant -> measure name prefix: recall is the challenge's measure, hit is FLMR's "Recall@K".
VARIANTS = {"recall": "Recall", "hit": "Hit", "strict": "StrictRecall"}


def string_lists(values, name):
    """Python lists of strings or an Arrow list array -> (row lengths, flat pa.StringArray)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        try:
            values = pa.array(values, type=pa.list_(pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
            raise ValueError(f"{name}: expected one list of strings per query ({err})") from None
    if values.null_count:
        row = values.is_null().to_numpy(zero_copy_only=False).argmax()
        raise ValueError(f"{name}: row {row} is null, expected a list of strings")
    lengths = values.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64)
    flat = values.flatten().cast(pa.string())
    if flat.null_count:
        i = int(flat.is_null().to_numpy(zero_copy_only=False).argmax())
        row, pos = locate(lengths, i)
        raise ValueError(f"{name}: row {row}, position {pos + 1} is null, expected a string")
    return lengths, flat


def locate(lengths, flat_index):
    """Flat index -> (row, 0-based position in that row)."""
    ends = np.cumsum(lengths)
    row = int(np.searchsorted(ends, flat_index, side="right"))
    return row, int(flat_index - (ends[row] - lengths[row]))


def row_name(query_ids, row):
    return f"query {query_ids[row]!r}" if query_ids is not None else f"row {row}"


def ranked_strings(ranked, depth):
    """Rankings (Python lists or an Arrow list array) -> (lengths of their first ``depth`` ids, those ids)."""
    if isinstance(ranked, (pa.Array, pa.ChunkedArray)):
        if isinstance(ranked, pa.ChunkedArray):
            ranked = ranked.combine_chunks()
        ranked = pc.list_slice(ranked, 0, depth) if len(ranked) else ranked
    else:
        ranked = ranked if isinstance(ranked, (list, tuple)) else list(ranked)
        if set(map(type, ranked)) <= {list, tuple}:
            joined = joined_strings(ranked, depth)
            if joined is not None:
                return joined
        ranked = [ranking[:depth] for ranking in ranked]
    # Arrow input, or a bad value that string_lists names
    lengths, flat = string_lists(ranked, "predictions")
    return lengths, arrow_strings(flat)


def check_cutoffs(k):
    ks = tuple(sorted({int(x) for x in k}))
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be positive integers, got {list(k)}")
    return ks


class Positives:
    """M2KR ground truth prepared once: (query, passage) pairs (``PairIndex``) and the positives per query."""

    def __init__(self, positive_ids, query_ids=None):
        self.query_ids = None if query_ids is None else list(query_ids)
        lengths, flat = string_lists(positive_ids, "references")
        self.num_queries = len(lengths)
        if self.query_ids is not None and len(self.query_ids) != self.num_queries:
            raise ValueError(f"{len(self.query_ids)} query ids for {self.num_queries} queries with positives")
        empty = np.flatnonzero(lengths == 0)
        if len(empty):
            raise ValueError(f"references: {row_name(self.query_ids, empty[0])} has no positive passage")
        self.pairs = PairIndex(lengths, arrow_strings(flat))
        if self.pairs.repeat is not None:
            row, pos = locate(lengths, self.pairs.repeat)
            raise ValueError(
                f"references: {row_name(self.query_ids, row)} lists positive {flat[self.pairs.repeat].as_py()!r} "
                f"twice (second at position {pos + 1})"
            )
        self.num_positives = lengths

    def found(self, ranked, depth):
        """Rankings aligned with the queries -> cumulative positives found, shape (queries, depth).

        Only the scored prefix is read, so an id repeated within it is an error; callers that need whole
        rankings checked (the CLI) validate them first.
        """
        lengths, flat = ranked_strings(ranked, depth)
        if len(lengths) != self.num_queries:
            raise ValueError(f"{len(lengths)} rankings for {self.num_queries} queries")
        cells = flat_cells(lengths, depth)
        at, hashes = self.pairs.match(cells // depth, flat)
        repeat = first_repeat(lengths, flat, hashes, cells, depth)
        if repeat:
            row, first, second, item = repeat
            raise ValueError(
                f"predictions: {row_name(self.query_ids, row)} lists {item!r} twice (positions {first + 1} and {second + 1})"
            )
        matrix = np.zeros(self.num_queries * depth, dtype=np.int64)
        matrix[cells[at >= 0]] = 1
        return np.cumsum(matrix.reshape(-1, depth), axis=1)


def per_query_scores(positives, found, k=DEFAULT_K, variants=("recall",)):
    """Per-query values in [0, 1] for each variant and cutoff, plus each variant's mean over the cutoffs."""
    ks = check_cutoffs(k)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant {unknown[0]!r}; expected one of {sorted(VARIANTS)}")
    total = positives.num_positives
    scores = {}
    for variant in variants:
        prefix = VARIANTS[variant]
        for cutoff in ks:
            top = found[:, min(cutoff, found.shape[1]) - 1]
            if variant == "recall":
                scores[f"{prefix}@{cutoff}"] = top / total
            elif variant == "hit":
                scores[f"{prefix}@{cutoff}"] = (top > 0).astype(float)
            else:
                scores[f"{prefix}@{cutoff}"] = (top == total).astype(float)
        scores[f"{prefix}-mean"] = np.mean([scores[f"{prefix}@{c}"] for c in ks], axis=0)
    return scores


def evaluate_run(positives, ranked, k=DEFAULT_K, variants=("recall",), per_query=False, tasks=None):
    """All requested M2KR measures (rank = position in the list); ``tasks`` labels queries for a breakdown."""
    ks = check_cutoffs(k)
    scores = per_query_scores(positives, positives.found(ranked, max(ks)), ks, variants)
    result = {name: float(values.mean()) for name, values in scores.items()}
    result["num_queries"] = positives.num_queries
    if per_query:
        result["per_query"] = {name: values.tolist() for name, values in scores.items()}
        if positives.query_ids is not None:
            result["per_query"]["query_id"] = list(positives.query_ids)
    if tasks is not None:
        tasks = np.asarray(list(tasks), dtype=object)
        if len(tasks) != positives.num_queries:
            raise ValueError(f"{len(tasks)} task labels for {positives.num_queries} queries")
        result["by_task"] = {}
        for task in sorted(set(tasks.tolist())):
            rows = tasks == task
            result["by_task"][task] = {
                **{name: float(values[rows].mean()) for name, values in scores.items()},
                "num_queries": int(rows.sum()),
            }
    return result
