"""Ragged id lists, exact (row, id) lookups and means, shared by the MIPR and M2KR metric folders.

Each folder must stand alone, so this file is copied into both; a test keeps the two copies byte-identical.
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def string_lists(values, name, depth=None):
    """One list of strings per row (Python lists, or an Arrow (Chunked)ListArray, never turned into Python
    objects) -> (int64 row lengths, flat pa.StringArray); only the first ``depth`` strings of a row if given."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        try:
            values = pa.array([row if row is None else row[:depth] for row in values], pa.list_(pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as err:
            raise ValueError(f"{name}: expected one list of strings per query ({err})") from None
    elif depth and len(values):
        values = pc.list_slice(values, 0, depth)
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if values.null_count:
        raise ValueError(f"{name}: row {np.argmax(values.is_null())} is null, expected a list of strings")
    lengths, flat = pc.list_value_length(values).to_numpy().astype(np.int64), values.flatten().cast(pa.string())
    if flat.null_count:
        row, position = locate(lengths, np.argmax(flat.is_null()))
        raise ValueError(f"{name}: row {row}, position {position} is null, expected a string")
    return lengths, flat


def locate(lengths, index):
    """Flat index -> (row, 1-based position in that row)."""
    ends = np.cumsum(lengths)
    row = int(np.searchsorted(ends, index, side="right"))
    return row, int(index - ends[row] + lengths[row]) + 1


def row_name(query_ids, row):
    return f"query {query_ids[row]!r}" if query_ids is not None else f"row {row}"


def check_cutoffs(k):
    ks = tuple(sorted({int(cutoff) for cutoff in k}))
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be positive integers, got {list(k)}")
    return ks


class Pairs:
    """The (row, id) pairs of ragged id lists, for exact lookups: ids are coded once (``dictionary_encode``),
    a pair is the int64 key ``row * len(ids) + code``, and the keys are sorted once for ``np.searchsorted``.
    ``repeat`` is the flat position of the earliest second listing of a pair, or None."""

    def __init__(self, lengths, ids, query_ids=None):
        self.query_ids = None if query_ids is None else list(query_ids)
        if self.query_ids is not None and len(self.query_ids) != len(lengths):
            raise ValueError(f"{len(self.query_ids)} query ids for {len(lengths)} queries")
        self.lengths, self.rows = lengths, np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        encoded = pc.dictionary_encode(ids)
        self.ids, self.codes = encoded.dictionary, encoded.indices.to_numpy()
        keys = self.rows * len(self.ids) + self.codes
        order = np.argsort(keys, kind="stable")
        later = order[1:][keys[order[1:]] == keys[order[:-1]]]
        self.repeat = int(later.min()) if len(later) else None
        # a last key above every pair's, so that every lookup lands on a key; its position -1 means "no pair"
        self.keys, self.order = np.append(keys[order], np.iinfo(np.int64).max), np.append(order, -1)

    def find(self, rankings, depth=None):
        """Rankings aligned with the rows -> (rows x depth) flat positions of their pairs, -1 for an id not paired
        with its row or an empty cell. Reads the first ``depth`` ids (default: all); one listed twice is an error."""
        lengths, ranked = string_lists(rankings, "predictions", depth)
        if len(lengths) != len(self.lengths):
            raise ValueError(f"{len(lengths)} rankings for {len(self.lengths)} queries")
        run = Pairs(lengths, ranked)
        if run.repeat is not None:
            row, second = locate(lengths, run.repeat)
            listed = ranked[run.repeat - second + 1 : run.repeat + 1].to_pylist()
            raise ValueError(f"predictions: {row_name(self.query_ids, row)} lists {listed[-1]!r} twice "
                             f"(positions {listed.index(listed[-1]) + 1} and {second})")
        known = pc.index_in(run.ids, value_set=self.ids).fill_null(-1).to_numpy()[run.codes]
        keys = run.rows * len(self.ids) + known
        at = np.searchsorted(self.keys, keys)
        found = np.full((len(lengths), depth or max(int(lengths.max(initial=0)), 1)), -1)
        positions = np.arange(len(keys)) - (np.cumsum(lengths) - lengths)[run.rows]
        found[run.rows, positions] = np.where((known >= 0) & (self.keys[at] == keys), self.order[at], -1)
        return found


def reorder(rankings, tier):
    """Each ranking (Python lists) sorted by its row of ``tier``, ties kept in ranking order."""
    order = np.argsort(tier, axis=1, kind="stable")
    return [[ranking[i] for i in order[row, : len(ranking)]] for row, ranking in enumerate(rankings)]


def mean(values):
    """Mean over the queries where a measure is defined (not NaN); None over none."""
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


def summary(scores, query_ids, per_query, labels, breakdown):
    """Means of per-query scores (NaN: left out of the mean); with ``per_query`` the per-query lists (None: left
    out), with ``labels`` (one per query) the means of each label's queries under ``breakdown``."""
    result = {name: mean(values) for name, values in scores.items()}
    if per_query:
        result["per_query"] = {name: np.where(np.isnan(values), None, values).tolist() for name, values in scores.items()}
        result["per_query"].update({} if query_ids is None else {"query_id": list(query_ids)})
    if labels is not None:
        result[breakdown] = {label: {**{name: mean(values[labels == label]) for name, values in scores.items()},
                                     "num_queries": int((labels == label).sum())} for label in sorted(set(labels.tolist()))}
    return result
