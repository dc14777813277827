"""Paired randomisation test (sign flips of per-query differences), two-sided, one sign matrix for many measures."""

import numpy as np


def paired_randomisation_ps(diffs, permutations: int = 10000, seed: int = 0, chunk: int = 1000) -> list:
    """p-value of each column's mean of ``diffs`` (queries x measures) under random sign flips of its rows, every
    column under the same flips; (hits + 1) / (permutations + 1), and 1.0 for a column of zeros."""
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    columns = np.asarray(diffs, dtype=float).T.copy()  # a contiguous row per measure
    count = columns.shape[1]
    tested = columns.any(axis=1)
    if not tested.any():
        return [1.0] * len(columns)
    observed = [abs(column.mean()) - 1e-12 for column in columns]
    rng = np.random.default_rng(seed)
    hits = [0] * len(columns)
    # chunks keep memory at chunk x queries; their sizes are part of the random stream, so they stay fixed
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = (rng.integers(0, 2, size=(size, count), dtype=np.int8) * 2 - 1).astype(float)
        for index in np.flatnonzero(tested):
            # one product per measure, as the single-measure test computes it, so the sums round alike
            hits[index] += int((np.abs(signs @ columns[index]) / count >= observed[index]).sum())
    return [(h + 1) / (permutations + 1) if t else 1.0 for h, t in zip(hits, tested)]


def pair_tests(a: dict, b: dict, measures: list, permutations: int, seed: int) -> dict:
    """{measure: (mean A, mean B, B - A, p, queries)} of two runs' ``per_query`` columns, over the queries both
    define (all None and 0 queries where none). Measures defined on the same queries share one sign matrix; each p
    equals the single-measure test's for the same seed."""
    columns = {}
    for name in measures:
        x = np.array([np.nan if v is None else v for v in a[name]], dtype=float)
        y = np.array([np.nan if v is None else v for v in b[name]], dtype=float)
        columns[name] = (x, y, ~(np.isnan(x) | np.isnan(y)))
    by_queries = {}
    for name, (_, _, defined) in columns.items():
        by_queries.setdefault(defined.tobytes(), []).append(name)
    tests = {}
    for names in by_queries.values():
        defined = columns[names[0]][2]
        if not defined.any():
            tests.update((name, (None, None, None, None, 0)) for name in names)
            continue
        diffs = np.column_stack([columns[name][1][defined] - columns[name][0][defined] for name in names])
        for name, p in zip(names, paired_randomisation_ps(diffs, permutations, seed)):
            mean_a, mean_b = (float(column[defined].mean()) for column in columns[name][:2])
            tests[name] = (mean_a, mean_b, mean_b - mean_a, p, int(defined.sum()))
    return {name: tests[name] for name in measures}
