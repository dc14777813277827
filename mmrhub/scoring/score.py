"""Scoring runs, in one place for every command: read, validate, score.

Only the tables scoring needs are read (``mmrhub.scoring.judgments``), never images, and ``datasets`` is not
imported.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mmrhub.scoring.groups import group_means
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.oracle import ORACLE_NAME
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.run import Run
from mmrhub.scoring.run_kaggle import restore_stripped_ids
from mmrhub.scoring.run_reading import read_run
from mmrhub.scoring.run_validation import check_pool
from mmrhub.scoring.run_validation import validate


@dataclass
class Scored:
    """One row of a table: a run (None for the oracle) and ``evaluate_run``'s result, per-query values included."""

    name: str
    run: Optional[Run]
    result: dict


def load_truth(request: ScoringRequest) -> Truth:
    """The benchmark's judgments from the request's data folder (or the bundled sample)."""
    return request.benchmark.read_truth(request.folder)


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


@dataclass
class ReadRuns:
    """A request's runs read and validated, pools checked: (name, run, rankings) per row, and the rankings whose
    pools the oracle reorders (None: no oracle row)."""

    rows: list
    oracle_baseline: Optional[object] = None


def read_runs(request: ScoringRequest, truth: Truth) -> ReadRuns:
    """Each run file read and validated once, its pools checked against ``request.rerank``'s."""
    if request.names and len(request.names) != len(request.runs):
        raise ValueError(
            f"--name was given {len(request.names)} time(s) for {len(request.runs)} run(s): give one name per run."
        )
    rows = []
    read = {}  # by resolved path: a file named as a run and as the baseline is read once

    def read_once(path):
        key = Path(path).resolve()
        if key not in read:
            read[key] = read_valid_run(truth, path, request.ignore_unknown_queries)
        return read[key]

    for index, path in enumerate(request.runs):
        run, rankings = read_once(path)
        if request.rerank is not None and Path(path).resolve() != Path(request.rerank).resolve():
            check_pool(run, read_once(request.rerank)[0])
        rows.append((request.names[index] if request.names else run.name, run, rankings))
    return ReadRuns(rows, None if request.oracle is None else read_once(request.oracle)[1])


def score_runs(request: ScoringRequest, truth: Truth) -> list:
    """A row per run file (named by ``request.names`` or the file stem), then the oracle row if asked for."""
    benchmark, options = request.benchmark, request.measure_options
    read = read_runs(request, truth)
    groups = truth.groups() if request.breakdown else None
    rows = [Scored(name, run, score(benchmark, truth, rankings, options, groups)) for name, run, rankings in read.rows]
    if read.oracle_baseline is not None:
        rankings = benchmark.oracle(truth.judgments, read.oracle_baseline, **request.oracle_options)
        rows.append(Scored(ORACLE_NAME, None, score(benchmark, truth, rankings, options, groups)))
    return rows
