"""trec_eval's order of each query's documents, for the formats whose lines are not the ranking itself (TREC, dict
runs): score descending, then docid descending (``comp_sim_docno`` in trec_eval's form_res_rels.c, a ``strcmp`` with
its arguments swapped). trec_eval keeps scores as C floats, so scores are compared in single precision: two that
differ only beyond it tie, and the docid decides."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_KEYS = [("query", "ascending"), ("score", "descending"), ("docid", "descending")]


def single_precision(scores: pa.Array) -> np.ndarray:
    """The scores as trec_eval compares them: float32 (beyond its range, infinite, as in C)."""
    with np.errstate(over="ignore"):
        return scores.to_numpy(zero_copy_only=False).astype(np.float32)


def in_trec_eval_order(query: np.ndarray, score32: np.ndarray) -> bool:
    """Whether the entries are grouped by query (``query``: codes in order of first appearance) with scores strictly
    descending within each: then no sort is needed. A tie needs the docids, so it is left to the sort."""
    same_query = query[1:] == query[:-1]
    return bool((query[1:] >= query[:-1]).all() and ((score32[1:] < score32[:-1]) | ~same_query).all())


def trec_eval_sort(query, score32: np.ndarray, dids: pa.Array) -> np.ndarray:
    """Indices that group the entries by query code, each query in trec_eval's order (the sort is stable)."""
    table = pa.table({"query": query, "score": score32, "docid": dids})
    return pc.sort_indices(table, sort_keys=_KEYS).to_numpy()


def queries_with_inversions(query: np.ndarray, ranks: np.ndarray, score32: np.ndarray) -> int:
    """How many queries have a score inversion: a line of a lower (better) rank with a lower score than a line of a
    higher rank. Ties contradict nothing: equal scores in any rank order, or equal ranks (a constant column), are
    no inversion, whatever order trec_eval's docid tie-break gives them."""
    order = np.lexsort((-score32, ranks, query))  # by query, then rank, a rank's scores descending
    query, ranks, score32 = query[order], ranks[order], score32[order]
    inverted = (query[1:] == query[:-1]) & (ranks[1:] > ranks[:-1]) & (score32[1:] > score32[:-1])
    return len(np.unique(query[1:][inverted]))
