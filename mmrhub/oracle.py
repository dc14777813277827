"""The Candidate-pool Oracle: each baseline pool reordered by what the judgments say of its items.

It is a run, not a measure, so it lives here and reads the metric folders' prepared judgments.
"""

import numpy as np
import pyarrow as pa

from mmrhub.metrics.mipr.mipr_measures import GAINS
from mmrhub.metrics.mipr.mipr_measures import first_covers

ORDERS = ("baseline", "coverage")


def _python_lists(rankings) -> list:
    return rankings.to_pylist() if isinstance(rankings, (pa.Array, pa.ChunkedArray)) else list(rankings)


def _reorder(rankings: list, tier) -> list:
    """Each ranking sorted by its row of ``tier``, ties kept in ranking order."""
    order = np.argsort(tier, axis=1, kind="stable")
    return [[ranking[i] for i in order[row, : len(ranking)]] for row, ranking in enumerate(rankings)]


def mipr(qrels, rankings, order: str = "baseline") -> list:
    """Each pool by true gain (L1, L2, the rest; baseline order within a grade). ``order="coverage"`` first puts
    the L1 items of L1 categories not yet covered, then the other L1 items."""
    if order not in ORDERS:
        raise ValueError(f"order={order!r}: expected one of {list(ORDERS)}")
    rankings = _python_lists(rankings)
    judged = qrels.pairs.find(rankings)
    tier = GAINS["L1"] - qrels.gain[judged]  # 0 for L1, 1 for L2, 2 for the rest
    if order == "coverage":  # 0 for an L1 item of a category not yet covered, then 1 for the other L1 items, ...
        tier = tier + 1 - first_covers(qrels, judged, "path", "L1")
    return _reorder(rankings, tier)


def m2kr(positives, rankings) -> list:
    """Each pool with its positives first, baseline order kept otherwise."""
    rankings = _python_lists(rankings)
    return _reorder(rankings, positives.pairs.find(rankings) < 0)
