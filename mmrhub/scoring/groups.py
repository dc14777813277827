"""Means per group of queries (``--by-category``, ``--by-task``), from the metric's per-query values."""

import re

import numpy as np


def natural_key(label) -> list:
    """Sorts labels as a reader counts: numbers by value, so 类目2 comes before 类目10."""
    return [(0, int(part), part) if part.isdigit() else (1, part, part) for part in re.split(r"(\d+)", str(label))]


def group_means(per_query: dict, labels) -> dict:
    """{label: {measure: its mean over the group's queries (None: over no query), "num_queries": n}}, the labels in
    natural order (``natural_key``).

    A query's value None (left out by a reading, e.g. ``no_l1="skip"``) is left out of its group's mean too.
    """
    labels = np.asarray(labels, dtype=object)
    values = {name: np.array(column, dtype=float) for name, column in per_query.items() if name != "query_id"}
    if any(len(v) != len(labels) for v in values.values()):
        raise ValueError(f"{len(labels)} group labels for {len(next(iter(values.values())))} queries")
    groups = {}
    for label in sorted(set(labels.tolist()), key=natural_key):
        rows = labels == label
        groups[label] = {
            name: float(np.nanmean(v[rows])) if (~np.isnan(v[rows])).any() else None for name, v in values.items()
        }
        groups[label]["num_queries"] = int(rows.sum())
    return groups
