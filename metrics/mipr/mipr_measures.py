"""Vectorised MIPR measures: judgments are prepared once, each run is one (queries x k) lookup.

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
from .lookup import sort_within_rows

GAINS = {"L1": 2, "L2": 1, "N1": 0, "N2": 0, "N3": 0}
DEFAULT_K = (10,)
NO_L1 = "(no L1)"


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


def string_array(values):
    """Python strings or an Arrow (chunked) string column -> one pa.StringArray, without a round trip via Python."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.cast(pa.string()) if isinstance(values, pa.Array) else pa.array(values, type=pa.string())


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


class Qrels:
    """MIPR judgments prepared once: (query, item) pairs (``PairIndex``) -> gain and L1 leaf category code."""

    def __init__(self, item_ids, grades, categories, query_ids=None):
        """Per-judgment lists: item ids, their grades and their category paths (one list of each per query)."""
        lengths, items = string_lists(item_ids, "references item_ids")
        cat_lengths, cats = string_lists(categories, "references categories")
        same_lengths(lengths, cat_lengths, "categories")

        def l1_categories(at):
            names = pc.dictionary_encode(cats.take(pa.array(at)))
            return names.indices.to_numpy(zero_copy_only=False).astype(np.int64), names.dictionary

        self._build(lengths, items, grades, l1_categories, query_ids)

    @classmethod
    def with_corpus_categories(cls, item_ids, grades, corpus_item_ids, corpus_categories, query_ids=None):
        """Judgments whose L1 items' categories are looked up in the corpus (item id -> ``treecate_full_path``).

        Only the L1 items are looked up, each must be in the corpus; the builder checks every judged item.
        """
        self = cls.__new__(cls)
        query_ids = None if query_ids is None else list(query_ids)
        lengths, items = string_lists(item_ids, "references item_ids")
        corpus_item_ids = string_array(corpus_item_ids)
        names = pc.dictionary_encode(string_array(corpus_categories))
        corpus_codes = names.indices.to_numpy(zero_copy_only=False).astype(np.int64)

        def l1_categories(at):
            rows = pc.index_in(items.take(pa.array(at)), value_set=corpus_item_ids)  # an id's first corpus row
            if rows.null_count:
                i = int(at[rows.is_null().to_numpy(zero_copy_only=False).argmax()])
                row, pos = locate(lengths, i)
                raise ValueError(
                    f"references: {row_name(query_ids, row)} judges {items[i].as_py()!r} (position {pos + 1}) L1, "
                    "but it is not in the corpus"
                )
            return corpus_codes[rows.to_numpy(zero_copy_only=False)], names.dictionary

        self._build(lengths, items, grades, l1_categories, query_ids)
        return self

    def _build(self, lengths, items, grades, l1_categories, query_ids):
        self.query_ids = None if query_ids is None else list(query_ids)
        self.num_queries = len(lengths)
        if self.query_ids is not None and len(self.query_ids) != self.num_queries:
            raise ValueError(f"{len(self.query_ids)} query ids for {self.num_queries} judged queries")
        gain = grade_gains(lengths, grades, "references grades")
        self.pairs = PairIndex(lengths, arrow_strings(items))
        if self.pairs.repeat is not None:
            row, pos = locate(lengths, self.pairs.repeat)
            raise ValueError(
                f"references: {row_name(self.query_ids, row)} judges {items[self.pairs.repeat].as_py()!r} "
                f"twice (second at position {pos + 1})"
            )
        qidx, order = self.pairs.row, self.pairs.order
        l1_at = np.flatnonzero(gain == GAINS["L1"])
        cat_codes, self.categories = l1_categories(l1_at)
        category = np.full(len(gain), -1, dtype=np.int32)
        category[l1_at] = cat_codes
        self.gain = gain[order]
        self.category = category[order]
        l1_query = qidx[l1_at]  # grouped by query, so sorting within rows puts its equal categories side by side
        self.num_l1 = np.bincount(l1_query, minlength=self.num_queries)
        self.num_l2 = np.bincount(qidx[np.flatnonzero(gain == GAINS["L2"])], minlength=self.num_queries)
        query_category = l1_query * max(len(self.categories), 1) + sort_within_rows(self.num_l1, cat_codes)
        distinct = np.ones(len(l1_at), dtype=bool)
        distinct[1:] = query_category[1:] != query_category[:-1]
        self.num_categories = np.bincount(l1_query[distinct], minlength=self.num_queries)
        self._idcg = {}

    def ideal_dcg(self, k):
        """trec_eval ndcg_cut ideal: the k largest judged gains, i.e. the L1 items first, then the L2 items."""
        if k not in self._idcg:
            cumulative = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, k + 2)))])
            l1_end = np.minimum(self.num_l1, k)
            l2_end = np.minimum(self.num_l1 + self.num_l2, k)
            gain_l1, gain_l2 = GAINS["L1"], GAINS["L2"]
            self._idcg[k] = gain_l1 * cumulative[l1_end] + gain_l2 * (cumulative[l2_end] - cumulative[l1_end])
        return self._idcg[k]

    def top_categories(self):
        """Each query's main top-level category: the most frequent among its L1 items (ties: first by name)."""
        names = np.array([c.split("-")[0] for c in self.categories.to_pylist()], dtype=object)
        tops, top_code = np.unique(names, return_inverse=True)
        width = max(len(tops), 1)
        l1 = self.category >= 0
        pair = self.pairs.row[l1] * width + top_code[self.category[l1]]
        uniq, counts = np.unique(pair, return_counts=True)
        query, top = uniq // width, uniq % width
        best = np.lexsort((top, -counts, query))
        first = best[np.r_[True, query[best][1:] != query[best][:-1]]] if len(best) else best
        result = np.full(self.num_queries, NO_L1, dtype=object)
        result[query[first]] = tops[top[first]]
        return result

    def judge(self, ranked, depth):
        """Rankings aligned with the judged queries -> (gain, L1 category) matrices of shape (queries, depth).

        Only the scored prefix is read, so an id repeated within it is an error; callers that need whole
        rankings checked (the CLI) validate them first.
        """
        lengths, flat = ranked_strings(ranked, depth)
        if len(lengths) != self.num_queries:
            raise ValueError(f"{len(lengths)} rankings for {self.num_queries} judged queries")
        cells = flat_cells(lengths, depth)
        at, hashes = self.pairs.match(cells // depth, flat)
        repeat = first_repeat(lengths, flat, hashes, cells, depth)
        if repeat:
            row, first, second, item = repeat
            raise ValueError(
                f"predictions: {row_name(self.query_ids, row)} lists {item!r} twice (positions {first + 1} and {second + 1})"
            )
        judged = np.flatnonzero(at >= 0)
        cells, at = cells[judged], at[judged]
        gain = np.zeros(self.num_queries * depth, dtype=np.int8)
        category = np.full(self.num_queries * depth, -1, dtype=np.int64)
        gain[cells] = self.gain[at]
        category[cells] = self.category[at]
        return gain.reshape(-1, depth), category.reshape(-1, depth)


def same_lengths(lengths, other, what):
    bad = np.flatnonzero(lengths != other)
    if len(bad):
        raise ValueError(f"references: row {bad[0]} has {other[bad[0]]} {what} for {lengths[bad[0]]} item_ids")


def grade_gains(lengths, grades, name):
    """Grade labels -> int8 gains; an unknown label is an error naming where it is."""
    grade_lengths, flat = string_lists(grades, name)
    same_lengths(lengths, grade_lengths, "grades")
    strings = arrow_strings(flat)
    if (strings.sizes == 2).all():
        # All labels two bytes (as MIPR's are): each is a uint16 that indexes a gain table, several times
        # faster than Arrow's set lookup.
        table = np.full(1 << 16, -1, dtype=np.int8)
        for label, gain in GAINS.items():
            if len(label.encode("utf-8")) == 2:
                table[int.from_bytes(label.encode("utf-8"), "little")] = gain
        start = int(strings.starts[0]) if len(flat) else 0
        gains = table[strings.data[start : start + 2 * len(flat)].view("<u2")]
    else:
        codes = pc.index_in(flat, value_set=pa.array(list(GAINS))).fill_null(-1)
        gains = np.array([*GAINS.values(), -1], dtype=np.int8)[codes.to_numpy(zero_copy_only=False)]
    unknown = np.flatnonzero(gains < 0)
    if len(unknown):
        row, pos = locate(lengths, int(unknown[0]))
        raise ValueError(
            f"{name}: unknown grade {flat[int(unknown[0])].as_py()!r} at row {row}, position {pos + 1}; "
            f"expected one of {list(GAINS)}"
        )
    return gains


def first_occurrences(category):
    """True where a row meets an L1 category for the first time (left to right)."""
    rows, cols = np.nonzero(category >= 0)
    new = np.zeros(category.shape, dtype=bool)
    if len(rows):
        keys = rows * (int(category.max()) + 1) + category[rows, cols]
        _, first = np.unique(keys, return_index=True)
        new[rows[first], cols[first]] = True
    return new


def per_query_scores(qrels, gain, category, k=DEFAULT_K, capped_recall=False):
    """Per-query measures (numpy arrays in [0, 1]) keyed by the seed's column names, plus the SC* mask."""
    ks = check_cutoffs(k)
    depth = gain.shape[1]
    discount = 1.0 / np.log2(np.arange(2, depth + 2))
    dcg = np.cumsum(gain * discount, axis=1)
    l1_found = np.cumsum(gain == GAINS["L1"], axis=1)
    covered = np.cumsum(first_occurrences(category), axis=1)
    num_l1, num_cat = qrels.num_l1, qrels.num_categories

    def ratio(top, total):
        return np.divide(top, total, out=np.zeros(len(top)), where=total > 0)

    scores = {}
    for cutoff in ks:
        col = min(cutoff, depth) - 1
        scores[f"nDCG@{cutoff}"] = ratio(dcg[:, col], qrels.ideal_dcg(cutoff))
        scores[f"R-L1@{cutoff}"] = ratio(l1_found[:, col], num_l1)
        if capped_recall:
            scores[f"R-L1-capped@{cutoff}"] = ratio(l1_found[:, col], np.minimum(cutoff, num_l1))
    scores["Hit-L1@1"] = (l1_found[:, 0] > 0).astype(float)
    for cutoff in ks:
        scores[f"Hit-L1@{cutoff}"] = (l1_found[:, min(cutoff, depth) - 1] > 0).astype(float)
    for cutoff in ks:
        scores[f"SC-R-L1@{cutoff}"] = ratio(covered[:, min(cutoff, depth) - 1], num_cat)
    return scores, num_cat >= 2


def aggregate(scores, multi_category, rows=None):
    """Means over queries (optionally a subset); SC-R-L1@k* only over queries with >= 2 L1 categories."""
    rows = np.ones(len(multi_category), dtype=bool) if rows is None else rows
    result = {}
    for name, values in scores.items():
        result[name] = float(values[rows].mean()) if rows.any() else 0.0
    for name, values in scores.items():
        if name.startswith("SC-R-L1@"):
            star = rows & multi_category
            result[name + "*"] = float(values[star].mean()) if star.any() else 0.0
    return result


def evaluate_run(qrels, ranked, k=DEFAULT_K, capped_recall=False, per_query=False, by_category=False):
    """All MIPR measures for rankings aligned with ``qrels``' queries (rank = position in the list)."""
    ks = check_cutoffs(k)
    gain, category = qrels.judge(ranked, max(ks))
    scores, multi = per_query_scores(qrels, gain, category, ks, capped_recall)
    result = aggregate(scores, multi)
    result["num_queries"] = qrels.num_queries
    result["num_multi_category_queries"] = int(multi.sum())
    if per_query:
        result["per_query"] = {name: values.tolist() for name, values in scores.items()}
        if qrels.query_ids is not None:
            result["per_query"]["query_id"] = list(qrels.query_ids)
    if by_category:
        tops = qrels.top_categories()
        result["by_category"] = {}
        for top in sorted(set(tops.tolist())):
            rows = tops == top
            result["by_category"][top] = {**aggregate(scores, multi, rows), "num_queries": int(rows.sum())}
    return result
