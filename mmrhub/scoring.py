"""Scoring runs, in one place for ``evaluate``, ``oracle``, ``compare`` and ``retrieve``: read, validate, score.

Only the tables scoring needs are read (``mmrhub.truth``), never images, and ``datasets`` is not imported.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mmrhub.groups import group_means
from mmrhub.runs import Run
from mmrhub.runs import check_pool
from mmrhub.runs import read_run
from mmrhub.runs import restore_stripped_ids
from mmrhub.runs import validate
from mmrhub.truth import Truth

ORACLE_NAME = "Candidate-pool Oracle"


@dataclass
class Scored:
    """One row of a table: a run (None for the oracle) and ``evaluate_run``'s result, per-query values included."""

    name: str
    run: Optional[Run]
    result: dict


def read_valid_run(truth: Truth, path, ignore_unknown_queries: bool = False):
    """(run, its rankings aligned with ``truth.query_ids``); a RunError names every problem found."""
    run = read_run(path)
    if run.format == "kaggle":
        restore_stripped_ids(run, truth.corpus_ids)
    return run, validate(run, truth, ignore_unknown_queries)


def score(benchmark, truth: Truth, rankings, options: dict, groups=None) -> dict:
    """The metric module's ``evaluate_run`` with per-query values, and the means per group if ``groups`` labels
    each judged query."""
    result = benchmark.measures.evaluate_run(truth.judgments, rankings, per_query=True, **options)
    if groups is not None:
        result[benchmark.breakdown.key] = group_means(result["per_query"], groups)
    return result


def score_runs(benchmark, truth: Truth, paths, names=None, oracle=None, rerank=None, options=None,
               oracle_options=None, breakdown: bool = False, ignore_unknown_queries: bool = False) -> list:
    """A row per run file (named by ``names`` or the file stem), then the oracle row of the ``oracle`` baseline.

    ``rerank``: a baseline run; every other run must rank exactly its pool for each query.
    """
    options = options or {}
    names = list(names or [])
    if names and len(names) != len(paths):
        raise ValueError(f"--name was given {len(names)} time(s) for {len(paths)} run(s): give one name per run.")
    rows = []
    baselines = {}
    groups = truth.groups() if breakdown else None

    def baseline(path):
        if path not in baselines:
            baselines[path] = read_valid_run(truth, path, ignore_unknown_queries)
        return baselines[path]

    for index, path in enumerate(paths):
        run, rankings = read_valid_run(truth, path, ignore_unknown_queries)
        if rerank is not None and Path(path).resolve() != Path(rerank).resolve():
            check_pool(run, baseline(rerank)[0])
        rows.append(Scored(names[index] if names else run.name, run, score(benchmark, truth, rankings, options, groups)))
    if oracle is not None:
        rankings = benchmark.oracle(truth.judgments, baseline(oracle)[1], **(oracle_options or {}))
        rows.append(Scored(ORACLE_NAME, None, score(benchmark, truth, rankings, options, groups)))
    return rows
