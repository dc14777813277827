"""The Candidate-pool Oracle's mechanics: each baseline pool reordered by tiers that a benchmark computes from its
judgments (``mmrhub.benchmarks``). It is a run, not a measure, so it lives beside the runs, not in a metric."""

import numpy as np
import pyarrow as pa

ORACLE_NAME = "Candidate-pool Oracle"


def python_lists(rankings) -> list:
    """Rankings as lists of ids, from an Arrow list array or any sequence of sequences."""
    return rankings.to_pylist() if isinstance(rankings, (pa.Array, pa.ChunkedArray)) else list(rankings)


def reorder(rankings: list, tier) -> list:
    """Each ranking sorted by its row of ``tier`` (lower first), ties kept in ranking order."""
    order = np.argsort(tier, axis=1, kind="stable")
    return [[ranking[i] for i in order[row, : len(ranking)]] for row, ranking in enumerate(rankings)]
