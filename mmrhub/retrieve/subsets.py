"""Parts of the queries and corpus a run embeds, so that a trial reads only the images it uses: the first N queries
or the queries named (``--queries``, ``--query-ids``), and, with a candidates run, only the corpus items its pools
name. Rows are picked from the tables before any image is read: each image is read when its row is embedded."""

from mmrhub.retrieve.data_loading import LoadedSide


def rows_of(side: LoadedSide, rows: list) -> LoadedSide:
    """``side`` holding only ``rows`` (row numbers), in that order."""
    return LoadedSide(side.dataset.select(rows), side.table, [side.ids[row] for row in rows])


def chosen_queries(queries: LoadedSide, count=None, query_ids=()) -> LoadedSide:
    """The queries a run embeds: all of them, the first ``count``, or those of ``query_ids`` in that order (an
    id the table lacks is an error naming it)."""
    if query_ids:
        position = {qid: row for row, qid in enumerate(queries.ids)}
        unknown = [qid for qid in query_ids if qid not in position]
        if unknown:
            shown = ", ".join(repr(qid) for qid in unknown[:5]) + (
                f" and {len(unknown) - 5} more" if unknown[5:] else ""
            )
            raise ValueError(
                f"--query-ids: {shown} not in the {queries.table.config} table's {queries.table.id_column} "
                f"({len(queries.ids):,} queries); give ids of that column."
            )
        repeated = len(set(query_ids)) != len(query_ids)
        if repeated:
            raise ValueError("--query-ids: an id is given twice; give each query once.")
        return rows_of(queries, [position[qid] for qid in query_ids])
    if count is not None and count < len(queries.ids):
        return rows_of(queries, list(range(count)))
    return queries


def is_subset(queries: LoadedSide, total: int) -> bool:
    """Whether the run embeds fewer queries than the table holds."""
    return len(queries.ids) < total


def pooled_rows(pools) -> list:
    """The corpus rows a (queries, width) tensor of pools names (-1 pads), ascending: the corpus order is kept, so
    ties rank as they would over the whole corpus."""
    return sorted(set(pools[pools >= 0].tolist()))


def renumbered(pools, rows: list, corpus_size: int):
    """``pools`` with corpus row numbers replaced by their places in ``rows`` (-1 padding kept)."""
    import torch

    place = torch.full((max(corpus_size, 1),), -1, dtype=pools.dtype)
    place[torch.tensor(rows, dtype=torch.int64)] = torch.arange(len(rows), dtype=pools.dtype)
    return torch.where(pools >= 0, place[pools.clamp(min=0)], pools)
