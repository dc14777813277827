"""Tensors of the search to and from the run format, which ``mmrhub.scoring`` reads and writes."""

import torch

from mmrhub.scoring.run_reading import read_run
from mmrhub.scoring.run_validation import validate


def rankings(corpus_ids, scores: torch.Tensor, indices: torch.Tensor):
    """(ranked ids, their scores) per query, in query order; index -1 (pool padding) is left out."""
    ids, values = [], []
    for row_scores, row_indices in zip(scores.tolist(), indices.tolist()):
        kept = [(corpus_ids[i], s) for s, i in zip(row_scores, row_indices) if i >= 0]
        ids.append([did for did, _ in kept])
        values.append([s for _, s in kept])
    return ids, values


def read_pools(path, truth, query_ids, corpus_ids) -> torch.Tensor:
    """Each query's candidate pool from a baseline run file, as a (queries, width) tensor of corpus indices
    (-1 pads shorter pools), in the order of ``query_ids``. The file is read and validated as ``mmrhub evaluate``
    does; a RunError names each problem."""
    run = read_run(path)
    validate(run, truth)
    by_query = dict(zip(run.query_ids.to_pylist(), run.rankings.to_pylist()))
    pools = [by_query.get(qid, []) for qid in query_ids]
    position = {did: i for i, did in enumerate(corpus_ids)}
    tensor = torch.full((len(pools), max(map(len, pools), default=0)), -1, dtype=torch.int64)
    for row, pool in enumerate(pools):
        tensor[row, : len(pool)] = torch.tensor([position[did] for did in pool], dtype=torch.int64)
    return tensor
