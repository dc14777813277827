"""Means per group of queries (``--by-category``, ``--by-task``), from the metric's per-query values."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.metrics.mipr.mipr_measures import GAINS

NO_L1 = "(no L1)"


def group_means(per_query: dict, labels) -> dict:
    """{label: {measure: its mean over the group's queries (None: over no query), "num_queries": n}}.

    A query's value None (left out by a reading, e.g. ``no_l1="skip"``) is left out of its group's mean too.
    """
    labels = np.asarray(labels, dtype=object)
    values = {name: np.array(column, dtype=float) for name, column in per_query.items() if name != "query_id"}
    if any(len(v) != len(labels) for v in values.values()):
        raise ValueError(f"{len(labels)} group labels for {len(next(iter(values.values())))} queries")
    groups = {}
    for label in sorted(set(labels.tolist())):
        rows = labels == label
        groups[label] = {name: float(np.nanmean(v[rows])) if (~np.isnan(v[rows])).any() else None
                         for name, v in values.items()}
        groups[label]["num_queries"] = int(rows.sum())
    return groups


def mipr_main_categories(qrels) -> list:
    """Each query's most frequent first path segment among its L1 items (ties: first by name), else NO_L1."""
    l1 = qrels.gain[:-1] == GAINS["L1"]
    tops = pc.replace_substring_regex(qrels.paths, "-.*", "").take(qrels.category["path"][:-1][l1])  # first segment
    counts = pa.table({"row": qrels.pairs.rows[l1], "top": tops}).group_by(["row", "top"]).aggregate([([], "count_all")])
    ranked = counts.sort_by([("count_all", "ascending"), ("top", "descending")])  # each row's best comes last
    best = dict(zip(ranked["row"].to_pylist(), ranked["top"].to_pylist()))
    return [best.get(row, NO_L1) for row in range(qrels.num_queries)]
