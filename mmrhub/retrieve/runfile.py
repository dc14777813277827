"""The official run format of both benchmarks: ``[{"qid": "1", "ranked": [{"did": "...", "score": 0.87}]}]``."""

import json
import os
from pathlib import Path

import torch

from mmrhub.runs import aligned
from mmrhub.runs import read_run
from mmrhub.runs import validate


def to_run(query_ids, corpus_ids, scores: torch.Tensor, indices: torch.Tensor) -> list:
    """One entry per query, in query order; index -1 (pool padding) is left out."""
    run = []
    for qid, row_scores, row_indices in zip(query_ids, scores.tolist(), indices.tolist()):
        ranked = [{"did": corpus_ids[i], "score": s} for s, i in zip(row_scores, row_indices) if i >= 0]
        run.append({"qid": qid, "ranked": ranked})
    return run


def write_run(run: list, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_pools(path, query_ids, corpus_ids) -> torch.Tensor:
    """Each query's candidate pool from a baseline run file, as a (queries, width) tensor of corpus indices
    (-1 pads shorter pools). The file is read and validated as ``mmrhub evaluate`` does: every query once,
    every candidate in the corpus and listed once; a RunError names each problem."""
    query_ids, corpus_ids = list(query_ids), list(corpus_ids)
    run = read_run(path)
    validate(run, query_ids, corpus_ids)
    position = {did: i for i, did in enumerate(corpus_ids)}
    pools = [[position[did] for did in ranking] for ranking in aligned(run, query_ids)]
    tensor = torch.full((len(pools), max(map(len, pools), default=0)), -1, dtype=torch.int64)
    for row, indices in enumerate(pools):
        tensor[row, : len(indices)] = torch.tensor(indices, dtype=torch.int64)
    return tensor
