"""Shared by the MIPR and M2KR metric folders (copied, so each stands alone; a test keeps the copies identical)."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

def string_lists(values, name, depth=None, like=None):
    """One list of strings per row (Python lists, or an Arrow (Chunked)ListArray kept in Arrow) -> (int64 row
    lengths, flat string or dictionary array); only the first ``depth`` strings of a row; rows as long as ``like``'s if given."""
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
    flat = values.flatten()  # dictionary-encoded strings stay encoded: the index below needs their codes
    flat = flat if pa.types.is_dictionary(flat.type) else flat.cast(pa.string())
    lengths = pc.list_value_length(values).to_numpy().astype(np.int64)
    if flat.null_count:
        raise ValueError(f"{name}: {where(lengths, np.argmax(flat.is_null()))} is null, expected a string")
    if like is not None and not np.array_equal(lengths, like):
        row = next((row for row, (a, b) in enumerate(zip(lengths, like)) if a != b), None)
        raise ValueError(f"{name}: {len(lengths)} lists for {len(like)} queries" if row is None else
                         f"{name}: row {row} has {lengths[row]} values for {like[row]} item ids")
    return lengths, flat

def row_name(query_ids, row):
    return f"query {query_ids[row]!r}" if query_ids is not None else f"row {row}"

def where(lengths, index, query_ids=None):
    """A flat index as 'query ID, position P' (or 'row R, position P'), 1-based."""
    row = int(np.searchsorted(np.cumsum(lengths), index, side="right"))
    return f"{row_name(query_ids, row)}, position {index - int(lengths[:row].sum()) + 1}"

def check_cutoffs(k):
    ks = tuple(sorted({int(cutoff) for cutoff in k}))
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be positive integers, got {list(k)}")
    return ks

class Pairs:
    """(row, id) pairs as sorted int64 keys ``row * len(ids) + id code``; ``repeat``: where a pair first recurs."""

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
        """Rankings aligned with the rows, first ``depth`` ids (default: all; none twice) -> (rows x depth) flat
        positions of their pairs, -1 for an id not paired with its row or an empty cell."""
        lengths, ranked = string_lists(rankings, "predictions", depth)
        if len(lengths) != len(self.lengths):
            raise ValueError(f"{len(lengths)} rankings for {len(self.lengths)} queries")
        run = Pairs(lengths, ranked)
        if run.repeat is not None:
            raise ValueError(f"predictions: {where(lengths, run.repeat, self.query_ids)} lists "
                             f"{ranked[run.repeat].as_py()!r} a second time")
        known = pc.index_in(run.ids, value_set=self.ids).fill_null(-1).to_numpy()[run.codes]
        keys = run.rows * len(self.ids) + known
        at = np.searchsorted(self.keys, keys)
        found = np.full((len(lengths), depth or max(int(lengths.max(initial=0)), 1)), -1)
        positions = np.arange(len(keys)) - (np.cumsum(lengths) - lengths)[run.rows]
        found[run.rows, positions] = np.where((known >= 0) & (self.keys[at] == keys), self.order[at], -1)
        return found

def reorder(rankings, tier):
    """Each ranking (a Python list) sorted by its row of ``tier``, ties kept in ranking order."""
    order = np.argsort(tier, axis=1, kind="stable")
    return [[ranking[i] for i in order[row, : len(ranking)]] for row, ranking in enumerate(rankings)]

def summary(scores, query_ids, per_query, labels, breakdown):
    """Means (NaN: left out; None: a mean over no query); optionally per query (None: left out) and per label."""
    def means(rows):
        return {name: float(np.nanmean(v[rows])) if (~np.isnan(v[rows])).any() else None for name, v in scores.items()}
    result = means(slice(None))
    if per_query:
        result["per_query"] = {name: np.where(np.isnan(v), None, v).tolist() for name, v in scores.items()}
        result["per_query"].update({} if query_ids is None else {"query_id": list(query_ids)})
    if labels is not None:
        result[breakdown] = {label: {**means(labels == label), "num_queries": int((labels == label).sum())}
                             for label in sorted(set(labels.tolist()))}
    return result
