"""Paired randomisation test (sign flips of per-query differences), two-sided."""

import numpy as np


def paired_randomisation_p(a, b, permutations: int = 10000, seed: int = 0, chunk: int = 1000) -> float:
    """p-value of mean(b - a) under random swaps of each query's pair; (hits + 1) / (permutations + 1)."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    observed = abs(diff.mean())
    if not diff.any():
        return 1.0
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = rng.integers(0, 2, size=(size, len(diff)), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ diff) / len(diff)
        hits += int((means >= observed - 1e-12).sum())
    return (hits + 1) / (permutations + 1)


def compare(rows, permutations: int, seed: int) -> list:
    """(measure, mean A, mean B, B - A, p) for every per-query measure of two scored rows, over the queries both
    runs define."""
    a, b = rows[0].result["per_query"], rows[1].result["per_query"]
    compared = []
    for name in a:
        if name == "query_id":
            continue
        pairs = np.array([(x, y) for x, y in zip(a[name], b[name]) if x is not None and y is not None], dtype=float)
        if not len(pairs):
            compared.append((name, None, None, None, None))
            continue
        mean_a, mean_b = pairs.mean(axis=0)
        p = paired_randomisation_p(pairs[:, 0], pairs[:, 1], permutations, seed)
        compared.append((name, mean_a, mean_b, mean_b - mean_a, p))
    return compared
