"""Which queries the gallery shows: the given ids, the largest disagreements between runs, or a run's worst."""

import numpy as np


def values(per_query: dict, measure: str) -> np.ndarray:
    """A measure's per-query values as floats, NaN where undefined."""
    return np.array([np.nan if v is None else v for v in per_query[measure]], dtype=float)


def pick_queries(per_query_of_runs: list, measure: str, count: int, query_ids=None) -> list:
    """Query ids in the order shown.

    ``query_ids`` (from --query-ids) are kept as given and must be scored queries. Otherwise several runs give the
    ``count`` queries on which their ``measure`` differs most (max - min), one run its ``count`` lowest; ties keep
    the queries' order.
    """
    known = per_query_of_runs[0]["query_id"]
    if query_ids:
        unknown = sorted(set(query_ids) - set(known))
        if unknown:
            raise ValueError(
                f"--query-ids: {len(unknown)} id(s) are not judged queries of the benchmark, e.g. {unknown[0]!r}"
            )
        return list(dict.fromkeys(query_ids))
    table = np.stack([values(per_query, measure) for per_query in per_query_of_runs])
    if len(table) > 1:
        key = -(np.nanmax(table, axis=0) - np.nanmin(table, axis=0))
    else:
        key = table[0]
    order = np.argsort(np.nan_to_num(key, nan=np.inf), kind="stable")  # undefined values last
    return [known[i] for i in order[:count]]
