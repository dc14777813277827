"""The run files retrieve and rerank write: names taken from a model id (a table row, a default path), and the
search's tensors to and from the run format, which ``mmrhub.scoring`` reads and writes."""

import os
import re
from pathlib import Path

from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.validation import validate


def model_name(model_id: str) -> str:
    """The last part of a Hub id or folder (Qwen3-VL-Embedding-8B): a table row's name."""
    return os.path.basename(os.path.normpath(model_id))


def slug(model_id: str) -> str:
    """``model_name`` with anything but letters, digits and ``._-`` replaced by ``_``: safe in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name(model_id))


def default_output(benchmark_name: str, model_id: str) -> Path:
    """``runs/<benchmark>_<model slug>.json``."""
    return Path("runs") / f"{benchmark_name}_{slug(model_id)}.json"


def rankings(corpus_ids, scores, indices):
    """(ranked ids, their scores) per query, in query order; index -1 (pool padding) is left out."""
    ids, values = [], []
    for row_scores, row_indices in zip(scores.tolist(), indices.tolist()):
        kept = [(corpus_ids[i], s) for s, i in zip(row_scores, row_indices) if i >= 0]
        ids.append([did for did, _ in kept])
        values.append([s for _, s in kept])
    return ids, values


def check_candidates(path) -> None:
    """A --candidates run that is not there is one line before any work."""
    if path is not None and path != "-" and not os.path.lexists(path):
        raise FileNotFoundError(
            f"--candidates {path}: no such file; give the run whose rankings are the pools (e.g. a retrieve run, "
            "runs/<benchmark>_<model>.json)."
        )


def read_pools(path, truth, query_ids, corpus_ids):
    """Each query's candidate pool from a baseline run file, as a (queries, width) tensor of corpus indices
    (-1 pads shorter pools), in the order of ``query_ids``. The file is read and validated as ``mmrhub evaluate``
    does (a RunError names each problem); with ``truth`` None (tables read from a URL) its ids are checked against
    ``corpus_ids``."""
    import torch  # here: the names above serve torch-free commands (baseline's table, default paths)

    run = read_run(path)
    if truth is not None:  # a pool for every judged query: this command takes no --missing-queries
        validate(run, truth, missing_hint="Give candidates that rank every judged query (as retrieve writes them).")
    by_query = dict(zip(run.query_ids.to_pylist(), run.rankings.to_pylist()))
    pools = [by_query.get(qid, []) for qid in query_ids]
    position = {did: i for i, did in enumerate(corpus_ids)}
    unknown = next((did for pool in pools for did in pool if did not in position), None)
    if unknown is not None:  # without the judgment tables (remote data) only the ids can be checked
        raise ValueError(f"{path}: {unknown!r} is not in the corpus; the candidates must be a run of this benchmark.")
    tensor = torch.full((len(pools), max(map(len, pools), default=0)), -1, dtype=torch.int64)
    for row, pool in enumerate(pools):
        tensor[row, : len(pool)] = torch.tensor([position[did] for did in pool], dtype=torch.int64)
    return tensor
