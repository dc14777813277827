"""MIPR measures: judgments prepared once, then each run is a (queries x depth) matrix of judged gains."""

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc

from . import shared

# Every grade's gain; an unjudged product gains 0. The builder's mipr.GAINS is the same (a test holds them equal).
GAINS = {"L1": 2, "L2": 1, "N1": 0, "N2": 0, "N3": 0}
DEFAULT_K = (10,)
# Each measure's definition, as Markdown table cells: the metric card, the repository README and the exported
# dataset cards show exactly these rows (a test holds them equal).
DEFINITIONS = {
    "nDCG@k": (
        "gains L1=2, L2=1, others and unjudged 0; discount 1/log2(rank+1); ideal DCG from the k largest "
        "judged gains (trec_eval `ndcg_cut`; `ideal`); a query with ideal 0 scores 0"
    ),
    "R-L1@k": "\\|L1 in top k\\| / \\|L1 judged\\| (trec_eval `recall`; `recall_denominator`, `no_l1`)",
    "Hit-L1@1, Hit-L1@k": "1 if any L1 is in the top 1 / top k (trec_eval `success`)",
    "SC-R-L1@k": (
        "fraction of the query's distinct L1 leaf categories covered by L1 items in the top k (`covered_by`, "
        "`category`, `no_l1`)"
    ),
    "SC-R-L1@k*": "SC-R-L1@k averaged only over queries with at least two L1 categories (2,664 in the real data)",
}


@dataclass(frozen=True)
class Reading:
    """A rule the MIPR README leaves open, taken as a keyword option (as ir_measures' ``ParamInfo`` declares a
    measure's parameter): what it decides, each reading and what it means (the default first), what the source
    says of it, and why the default. Markdown, as ``DEFINITIONS``: the metric card and this module's description
    show ``row()`` (a test holds the card equal), the commands' help the same words."""

    decides: str
    choices: dict  # reading -> what it means; the first is the default
    status: str  # what the MIPR README says of the rule
    why: str  # why the default

    @property
    def default(self) -> str:
        """The first reading."""
        return next(iter(self.choices))

    def row(self, name: str) -> str:
        """The metric card's table row of the option ``name``."""
        readings = " or ".join(f"`{value}` ({meaning})" for value, meaning in self.choices.items())
        return f"| `{name}` ({self.decides}): {readings} | {self.status}; default `{self.default}`: {self.why} |"


READINGS = {
    "no_l1": Reading(
        "a query without L1",
        {"zero": "it scores 0 on R-L1@k and SC-R-L1@k and stays in those means", "skip": "it is left out of them"},
        "our reading",
        "trec_eval's rule, a query without relevant items scores 0 and stays in the mean",
    ),
    "recall_denominator": Reading(
        "R-L1@k's denominator",
        {"judged": "\\|L1\\|", "capped": "min(k, \\|L1\\|)"},
        "our reading, arguably fixed (above)",
        "recall of the judged L1 products, so of all of them",
    ),
    "covered_by": Reading(
        "what covers a category in SC-R-L1",
        {
            "L1": "only an L1 item in the top k covers its category",
            "judged": "any judged item whose category is one of the query's L1 categories",
        },
        "our reading",
        "the measure is L1 recall, only an optimal product solves the need",
    ),
    "category": Reading(
        "the leaf category",
        {"path": "the whole `treecate_full_path`", "leaf": "its last segment, split at `-`"},
        "our reading",
        "the MIPR README says `treecate_full_path` provides the leaf category",
    ),
    "ideal": Reading(
        "nDCG's ideal DCG",
        {"cutoff": "of the k largest judged gains", "all": "of all judged gains"},
        "our reading",
        "trec_eval's `ndcg_cut`, the ideal ranking is cut at k as the run is",
    ),
}


def check_readings(readings):
    """Keyword options -> the value of every open rule, defaults filled in."""
    for name, value in readings.items():
        if name not in READINGS:
            raise ValueError(f"unknown option {name!r}; expected one of {list(READINGS)}")
        if value not in list(READINGS[name].choices):
            raise ValueError(f"{name}={value!r}: expected one of {list(READINGS[name].choices)}")
    return {name: readings.get(name, reading.default) for name, reading in READINGS.items()}


def distinct(keys):
    """Sorted distinct keys >= 0; np.unique, by sorting: numpy 2.4's hashing np.unique is far slower on these."""
    keys = np.sort(keys)
    return keys[np.diff(keys, prepend=-1) != 0]


class Qrels:
    """MIPR judgments prepared once; per-judgment arrays end with an entry (gain 0, category -1) for "not judged"."""

    def __init__(self, references, grades, categories, query_ids=None):
        lengths, items = shared.string_lists(references, "references")
        self.pairs = shared.Pairs(lengths, items, "references", query_ids)
        self.query_ids, self.num_queries, rows = self.pairs.query_ids, len(lengths), self.pairs.rows
        labels = pc.dictionary_encode(shared.string_lists(grades, "references grades", like=lengths)[1])
        gain = np.array([GAINS.get(label, -1) for label in labels.dictionary.to_pylist()], np.int8)[labels.indices]
        if (gain < 0).any():
            at = int(np.argmax(gain < 0))
            raise ValueError(
                f"references grades: unknown grade {labels[at].as_py()!r} at "
                f"{shared.where(lengths, at, self.query_ids)}; expected one of {list(GAINS)}"
            )
        self.gain = np.append(gain, 0)
        paths = pc.dictionary_encode(shared.string_lists(categories, "references categories", like=lengths)[1])
        self.paths, path = paths.dictionary, paths.indices.to_numpy()
        leaf = pc.dictionary_encode(pc.replace_substring_regex(self.paths, "^.*-", "")).indices.to_numpy()  # last part
        self.category = {"path": np.append(path, -1), "leaf": np.append(leaf[path], -1)}
        l1, self.width = self.gain[:-1] == GAINS["L1"], max(len(self.paths), 1)
        self.num_l1 = np.bincount(rows[l1], minlength=len(lengths))
        self.num_l2 = np.bincount(rows[self.gain[:-1] == GAINS["L2"]], minlength=len(lengths))
        # each query's L1 categories as sorted keys row * width + code, and how many it has
        self.l1_keys = {name: distinct(rows[l1] * self.width + code[:-1][l1]) for name, code in self.category.items()}
        self.num_categories = {
            name: np.bincount(keys // self.width, minlength=len(lengths)) for name, keys in self.l1_keys.items()
        }

    def ideal_dcg(self, cutoff=None):
        """DCG of the ideal ranking (the L1 items, then the L2 items), cut at ``cutoff`` (None: not cut)."""
        depth = cutoff or int((self.num_l1 + self.num_l2).max(initial=0))
        cumulative = np.concatenate([[0.0], np.cumsum(1 / np.log2(np.arange(2, depth + 2)))])
        l1_end, l2_end = np.minimum(self.num_l1, depth), np.minimum(self.num_l1 + self.num_l2, depth)
        return GAINS["L1"] * cumulative[l1_end] + GAINS["L2"] * (cumulative[l2_end] - cumulative[l1_end])


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


def evaluate_run(qrels, rankings, k=DEFAULT_K, per_query=False, **readings):
    """All MIPR measures of rankings aligned with ``qrels``' queries (rank = position in the list)."""
    reading, ks, per_query = check_readings(readings), shared.check_cutoffs(k), shared.flag(per_query, "per_query")
    scores = per_query_scores(qrels, qrels.pairs.find(rankings, max(ks)), ks, reading)
    multi = int((qrels.num_categories[reading["category"]] >= 2).sum())
    result = shared.summary(scores, qrels.query_ids, per_query)
    return {**result, "num_queries": qrels.num_queries, "num_multi_category_queries": multi}
