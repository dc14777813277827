"""The official run format of both benchmarks: ``[{"qid": "1", "ranked": [{"did": "...", "score": 0.87}]}]``."""

import json
import os
from pathlib import Path

import torch


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
    (-1 pads shorter pools). Every query must have a pool and every candidate must be in the corpus."""
    try:
        run = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"--candidates {path}: cannot read a JSON run file ({err}).") from None
    if not isinstance(run, list):
        raise ValueError(f"--candidates {path}: expected a JSON array of {{qid, ranked}} objects.")
    position = {did: i for i, did in enumerate(corpus_ids)}
    pools = {}
    for number, entry in enumerate(run, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("ranked"), list) or "qid" not in entry:
            raise ValueError(f"--candidates {path}: entry {number} is not a {{qid, ranked}} object.")
        qid = str(entry["qid"])
        if qid in pools:
            raise ValueError(f"--candidates {path}: qid {qid!r} appears twice (entries {pools[qid][0]} and {number}).")
        dids = [item.get("did") if isinstance(item, dict) else None for item in entry["ranked"]]
        unknown = [did for did in dids if did not in position]
        if unknown:
            raise ValueError(f"--candidates {path}: qid {qid!r} lists {unknown[0]!r}, which is not in the corpus.")
        if len(set(dids)) != len(dids):
            raise ValueError(f"--candidates {path}: qid {qid!r} lists a candidate twice.")
        pools[qid] = (number, [position[did] for did in dids])
    missing = [qid for qid in query_ids if qid not in pools]
    if missing:
        raise ValueError(f"--candidates {path}: no candidate pool for {len(missing)} queries, e.g. qid {missing[0]!r}.")
    width = max([len(pools[qid][1]) for qid in query_ids], default=0)
    tensor = torch.full((len(query_ids), width), -1, dtype=torch.int64)
    for row, qid in enumerate(query_ids):
        indices = pools[qid][1]
        tensor[row, : len(indices)] = torch.tensor(indices, dtype=torch.int64)
    return tensor
