"""Shared by the MIPR and M2KR metric folders (copied, so each stands alone; a test keeps the copies identical)."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def string_lists(values, name, depth=None, like=None):
    """One list of strings per query (Python or Arrow lists) -> (int64 lengths, flat strings), each list cut at
    ``depth``, or as long as ``like``'s; dictionary-encoded Arrow strings stay encoded."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        try:
            values = pa.array([row if row is None else row[:depth] for row in values], pa.list_(pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as err:
            raise ValueError(f"{name}: expected one list of strings per query ({err})") from None
    values = pc.list_slice(values, 0, depth) if depth and len(values) else values
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if values.null_count:
        raise ValueError(f"{name}: row {np.argmax(values.is_null()) + 1} is null, expected a list of strings")
    lengths, flat = pc.list_value_length(values).to_numpy().astype(np.int64), values.flatten()
    if flat.null_count:
        raise ValueError(f"{name}: {where(lengths, np.argmax(flat.is_null()))} is null, expected a string")
    if like is not None and (len(lengths) != len(like) or (lengths != like).any()):
        row = int(np.argmax(lengths != like)) if len(lengths) == len(like) else None
        raise ValueError(
            f"{name}: {len(lengths)} lists for {len(like)} queries"
            if row is None
            else f"{name}: row {row + 1} has {lengths[row]} values for {like[row]} item ids"
        )
    return lengths, flat if pa.types.is_dictionary(flat.type) else flat.cast(pa.string())


def where(lengths, index, query_ids=None):
    """A flat index as "query ID, position P" (or "row R, position P" without query ids), both counted from 1."""
    row = int(np.searchsorted(np.cumsum(lengths), index, side="right"))
    name = f"query {query_ids[row]!r}" if query_ids is not None else f"row {row + 1}"
    return f"{name}, position {index - int(lengths[:row].sum()) + 1}"


def check_cutoffs(k):
    """The cutoffs sorted and distinct, each at least 1."""
    ks = tuple(sorted({int(cutoff) for cutoff in k}))
    if not ks or ks[0] < 1:
        raise ValueError(f"cutoffs must be positive integers, got {list(k)}")
    return ks


class Pairs:
    """Each row's ids as sorted int64 keys ``row * len(ids) + id code``, refused if a row lists an id twice."""

    def __init__(self, lengths, ids, name, query_ids=None):
        self.query_ids = None if query_ids is None else list(query_ids)
        if self.query_ids is not None and len(self.query_ids) != len(lengths):
            raise ValueError(f"{len(self.query_ids)} query ids for {len(lengths)} queries")
        self.rows, self.num_rows = np.repeat(np.arange(len(lengths)), lengths), len(lengths)
        encoded = pc.dictionary_encode(ids)  # ids already encoded are kept as they are
        self.ids, self.codes = encoded.dictionary, encoded.indices.to_numpy()
        keys = self.rows * len(self.ids) + self.codes
        order = np.argsort(keys, kind="stable")
        again = order[1:][keys[order[1:]] == keys[order[:-1]]]
        if len(again):
            at = int(again.min())
            raise ValueError(f"{name}: {where(lengths, at, self.query_ids)} lists {ids[at].as_py()!r} a second time")
        # a last key above every pair's, so that every lookup lands on a key; its position -1 means "no pair"
        self.keys, self.order = np.append(keys[order], np.iinfo(np.int64).max), np.append(order, -1)

    def find(self, rankings, depth=None):
        """(rows x depth) positions of the ranked ids' pairs (default depth: the longest ranking), -1 for none."""
        lengths, ranked = string_lists(rankings, "predictions", depth)
        if len(lengths) != self.num_rows:
            raise ValueError(f"{len(lengths)} rankings for {self.num_rows} queries")
        run = Pairs(lengths, ranked, "predictions", self.query_ids)
        known = pc.index_in(run.ids, value_set=self.ids).fill_null(-1).to_numpy()[run.codes]
        keys = run.rows * len(self.ids) + known
        at = np.searchsorted(self.keys, keys)
        found = np.full((len(lengths), depth or max(int(lengths.max(initial=0)), 1)), -1)
        positions = np.arange(len(keys)) - (np.cumsum(lengths) - lengths)[run.rows]
        found[run.rows, positions] = np.where((known >= 0) & (self.keys[at] == keys), self.order[at], -1)
        return found


def summary(scores, query_ids, per_query):
    """Means (None: a mean over no query; NaN values are left out), and optionally each query's (None: left out)."""
    result = {name: float(np.nanmean(v)) if (~np.isnan(v)).any() else None for name, v in scores.items()}
    if per_query:
        ids = {} if query_ids is None else {"query_id": list(query_ids)}
        result["per_query"] = {**{name: np.where(np.isnan(v), None, v).tolist() for name, v in scores.items()}, **ids}
    return result
