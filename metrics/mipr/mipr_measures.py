"""MIPR measures: judgments prepared once, then each run is a (queries x depth) matrix of judged gains."""
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import shared

GAINS = {"L1": 2, "L2": 1, "N1": 0, "N2": 0, "N3": 0}
DEFAULT_K = (10,)
NO_L1 = "(no L1)"
# The rules the seed leaves open, as keyword options: their values, the default (today's behaviour) first.
READINGS = {"no_l1": ("zero", "skip"), "recall_denominator": ("judged", "capped"), "covered_by": ("L1", "judged"),
            "category": ("path", "leaf"), "ideal": ("cutoff", "all")}
WHY_DEFAULT = {
    "no_l1": "trec_eval's rule: a query without relevant items scores 0 and stays in the mean",
    "recall_denominator": "the seed's R-L1 is recall of the judged L1 products, so of all of them",
    "covered_by": "the measure is L1 recall: only an optimal (L1) product solves the need",
    "category": "the seed: treecate_full_path provides the leaf category",
    "ideal": "trec_eval's ndcg_cut: the ideal ranking is cut at k, as the run is",
}

def check_readings(readings):
    """Keyword options -> the value of every open rule, defaults filled in."""
    for name, value in readings.items():
        if value not in READINGS.get(name, ()):
            raise ValueError(f"{name}={value!r}: expected one of {list(READINGS[name])}" if name in READINGS
                             else f"unknown option {name!r}; expected one of {list(READINGS)}")
    return {name: readings.get(name, values[0]) for name, values in READINGS.items()}

def distinct(keys):
    """Sorted distinct keys >= 0; np.unique, by sorting: numpy 2.4's hashing np.unique is ~50x slower on these."""
    keys = np.sort(keys)
    return keys[np.diff(keys, prepend=-1) != 0]

class Qrels:
    """MIPR judgments prepared once: each judged (query, item) pair's gain and category codes. Per-judgment arrays
    end with one extra entry (gain 0, category -1) for the index -1, "not judged"."""

    def __init__(self, references, grades, categories, query_ids=None):
        lengths, items = shared.string_lists(references, "references")
        self.pairs = shared.Pairs(lengths, items, query_ids)
        self.query_ids, self.num_queries, rows = self.pairs.query_ids, len(lengths), self.pairs.rows
        if self.pairs.repeat is not None:
            raise ValueError(f"references: {shared.where(lengths, self.pairs.repeat, self.query_ids)} judges "
                             f"{items[self.pairs.repeat].as_py()!r} a second time")
        labels = pc.dictionary_encode(shared.string_lists(grades, "references grades", like=lengths)[1])
        known = pc.index_in(labels.dictionary, value_set=pa.array(list(GAINS))).fill_null(-1).to_numpy()
        grade = known[labels.indices.to_numpy()]
        if (grade < 0).any():
            at = int(np.argmax(grade < 0))
            raise ValueError(f"references grades: unknown grade {labels[at].as_py()!r} at "
                             f"{shared.where(lengths, at, self.query_ids)}; expected one of {list(GAINS)}")
        self.gain = np.append(np.array(list(GAINS.values()), dtype=np.int8)[grade], 0)
        paths = pc.dictionary_encode(shared.string_lists(categories, "references categories", like=lengths)[1])
        self.paths, path = paths.dictionary, paths.indices.to_numpy()
        # the "leaf" reading: each path's last segment
        leaf = pc.dictionary_encode(pc.replace_substring_regex(self.paths, "^.*-", "")).indices.to_numpy()
        self.category = {"path": np.append(path, -1), "leaf": np.append(leaf[path], -1)}
        l1, self.width = self.gain[:-1] == GAINS["L1"], max(len(self.paths), 1)
        self.num_l1 = np.bincount(rows[l1], minlength=len(lengths))
        self.num_l2 = np.bincount(rows[self.gain[:-1] == GAINS["L2"]], minlength=len(lengths))
        # each query's L1 categories as sorted keys row * width + code, and how many it has
        self.l1_keys = {name: distinct(rows[l1] * self.width + code[:-1][l1]) for name, code in self.category.items()}
        self.num_categories = {name: np.bincount(keys // self.width, minlength=len(lengths))
                               for name, keys in self.l1_keys.items()}

    def ideal_dcg(self, cutoff=None):
        """DCG of the ideal ranking (the L1 items, then the L2 items), cut at ``cutoff`` (None: not cut)."""
        depth = cutoff or int((self.num_l1 + self.num_l2).max(initial=0))
        cumulative = np.concatenate([[0.0], np.cumsum(1 / np.log2(np.arange(2, depth + 2)))])
        l1_end, l2_end = np.minimum(self.num_l1, depth), np.minimum(self.num_l1 + self.num_l2, depth)
        return GAINS["L1"] * cumulative[l1_end] + GAINS["L2"] * (cumulative[l2_end] - cumulative[l1_end])

    def top_categories(self):
        """Each query's most frequent first path segment among its L1 items (ties: first by name), else NO_L1."""
        l1 = self.gain[:-1] == GAINS["L1"]
        tops = pc.replace_substring_regex(self.paths, "-.*", "").take(self.category["path"][:-1][l1])  # first segment
        pairs = pa.table({"row": self.pairs.rows[l1], "top": tops})
        counts = pairs.group_by(["row", "top"]).aggregate([([], "count_all")])
        ranked = counts.sort_by([("count_all", "ascending"), ("top", "descending")])  # each row's best comes last
        best = dict(zip(ranked["row"].to_pylist(), ranked["top"].to_pylist()))
        return np.array([best.get(row, NO_L1) for row in range(self.num_queries)], dtype=object)

def first_covers(qrels, judged, category, covered_by):
    """True where a cell covers one of its query's L1 categories for the first time, left to right."""
    code = qrels.category[category][judged]
    keys = np.arange(len(judged))[:, None] * qrels.width + code
    counts = qrels.gain[judged] == GAINS["L1"] if covered_by == "L1" else np.isin(keys, qrels.l1_keys[category])
    cells = np.flatnonzero(counts & (code >= 0))
    first = np.zeros(judged.shape, dtype=bool)
    first.flat[cells[np.unique(keys.flat[cells], return_index=True)[1]]] = True
    return first

def per_query_scores(qrels, judged, ks, reading):
    """Each measure per query, NaN where the readings leave the query out of the mean."""
    def ratio(part, whole, undefined):
        return np.divide(part, whole, out=np.full(len(part), undefined), where=whole > 0)

    gain = qrels.gain[judged]
    dcg = np.cumsum(gain / np.log2(np.arange(2, gain.shape[1] + 2)), axis=1)
    l1_found = np.cumsum(gain == GAINS["L1"], axis=1)
    covered = np.cumsum(first_covers(qrels, judged, reading["category"], reading["covered_by"]), axis=1)
    num_categories, no_l1 = qrels.num_categories[reading["category"]], np.nan if reading["no_l1"] == "skip" else 0.0
    scores = {}
    for k in ks:
        scores[f"nDCG@{k}"] = ratio(dcg[:, k - 1], qrels.ideal_dcg(k if reading["ideal"] == "cutoff" else None), 0.0)
        capped = reading["recall_denominator"] == "capped"
        scores[f"R-L1@{k}"] = ratio(l1_found[:, k - 1], np.minimum(k, qrels.num_l1) if capped else qrels.num_l1, no_l1)
    for k in sorted({1, *ks}):
        scores[f"Hit-L1@{k}"] = (l1_found[:, k - 1] > 0).astype(float)
    for k in ks:  # SC-R-L1@k* leaves out the queries with fewer than two L1 categories
        scores[f"SC-R-L1@{k}"] = ratio(covered[:, k - 1], num_categories, no_l1)
        scores[f"SC-R-L1@{k}*"] = np.where(num_categories >= 2, scores[f"SC-R-L1@{k}"], np.nan)
    return scores

def evaluate_run(qrels, rankings, k=DEFAULT_K, per_query=False, by_category=False, **readings):
    """All MIPR measures of rankings aligned with ``qrels``' queries (rank = position in the list)."""
    reading, ks = check_readings(readings), shared.check_cutoffs(k)
    scores = per_query_scores(qrels, qrels.pairs.find(rankings, max(ks)), ks, reading)
    labels = qrels.top_categories() if by_category else None
    multi = int((qrels.num_categories[reading["category"]] >= 2).sum())
    result = shared.summary(scores, qrels.query_ids, per_query, labels, "by_category")
    return {**result, "num_queries": qrels.num_queries, "num_multi_category_queries": multi}

def oracle_rankings(qrels, rankings, order="baseline"):
    """Each pool reordered by true gain (L1, L2, the rest; baseline order within a grade) as Python lists;
    ``order="coverage"`` first puts the L1 items of L1 categories not yet covered."""
    if order not in ("baseline", "coverage"):
        raise ValueError(f"order={order!r}: expected one of ['baseline', 'coverage']")
    rankings = rankings.to_pylist() if isinstance(rankings, (pa.Array, pa.ChunkedArray)) else list(rankings)
    judged = qrels.pairs.find(rankings)
    tier = GAINS["L1"] - qrels.gain[judged]  # 0 for L1, 1 for L2, 2 for the rest
    if order == "coverage":  # 0 for an L1 item of a category not yet covered, then 1 for the other L1 items, ...
        tier = tier + 1 - first_covers(qrels, judged, "path", "L1")
    return shared.reorder(rankings, tier)
