"""Paired randomisation test (sign flips of per-query differences), two-sided: one sign matrix per number of
queries, drawn once for every pair and measure of a command, and one matrix product per chunk of it."""

import numpy as np

from mmrhub.scoring.compare.signs import SignDraws


def randomisation_ps(columns: list, permutations: int = 10000, seed: int = 0, chunk: int = 1000) -> list:
    """p-value of the mean of each 1-D array of ``columns`` (per-query differences) under random sign flips; the
    columns of one length share one sign matrix, drawn once from ``seed``, so each p equals the one-column test's.
    (hits + 1) / (permutations + 1), and 1.0 for a column of zeros."""
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    ps = [1.0] * len(columns)
    by_length = {}
    for index, column in enumerate(columns):
        if column.any():
            by_length.setdefault(len(column), []).append(index)
    for count, indices in by_length.items():
        matrix = np.column_stack([columns[index] for index in indices])
        # each mean over its own contiguous copy, as the one-column test takes it, so it rounds alike
        observed = np.array([abs(np.ascontiguousarray(columns[index]).mean()) - 1e-12 for index in indices])
        hits = np.zeros(len(indices), dtype=np.int64)
        draws = SignDraws(seed, count, min(chunk, permutations))
        # chunks keep memory at chunk x queries; their sizes are part of the random stream, so they stay fixed
        for start in range(0, permutations, chunk):
            hits += (np.abs(draws(min(chunk, permutations - start)) @ matrix) / count >= observed).sum(axis=0)
        for index, h in zip(indices, hits.tolist()):
            ps[index] = (h + 1) / (permutations + 1)
    return ps


def pairs_tests(pairs: list, measures: list, permutations: int, seed: int) -> list:
    """For each pair (A, B) of ``per_query`` columns: {measure: (mean A, mean B, B - A, p, queries)} over the
    queries both define (all None and 0 queries where none). Every test of the same number of queries, across the
    pairs and measures, shares one sign matrix; each p equals the single-measure test's for the same seed."""
    found, columns, where = [], [], []
    for number, (a, b) in enumerate(pairs):
        tests = {}
        for name in measures:
            x = np.array([np.nan if v is None else v for v in a[name]], dtype=float)
            y = np.array([np.nan if v is None else v for v in b[name]], dtype=float)
            defined = ~(np.isnan(x) | np.isnan(y))
            if not defined.any():
                tests[name] = (None, None, None, None, 0)
                continue
            x, y = x[defined], y[defined]
            mean_a, mean_b = float(x.mean()), float(y.mean())
            tests[name] = (mean_a, mean_b, mean_b - mean_a, None, int(defined.sum()))
            columns.append(y - x)
            where.append((number, name))
        found.append(tests)
    for (number, name), p in zip(where, randomisation_ps(columns, permutations, seed)):
        mean_a, mean_b, difference, _, queries = found[number][name]
        found[number][name] = (mean_a, mean_b, difference, p, queries)
    return [{name: tests[name] for name in measures} for tests in found]
