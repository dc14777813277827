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
from mmrhub.scoring.run_bytes import STDIN
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


def read_valid_run(truth: Truth, path, ignore_unknown_queries: bool = False, trec_order: str = "score"):
    """(run, its rankings aligned with ``truth.query_ids``); a RunError names every problem found."""
    run = read_run(path, trec_order)
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


def score_runs(request: ScoringRequest, truth: Truth) -> list:
    """A row per run file (named by ``request.names`` or the file stem), then the oracle row if asked for."""
    benchmark, options = request.benchmark, request.measure_options
    if request.names and len(request.names) != len(request.runs):
        raise ValueError(
            f"--name was given {len(request.names)} time(s) for {len(request.runs)} run(s): give one name per run."
        )
    if [*request.runs, *{request.oracle, request.rerank} - {None}].count(STDIN) > 1:
        raise ValueError(f"standard input ('{STDIN}') can be read once: give it as one run at most.")
    rows = []
    baselines = {}
    groups = truth.groups() if request.breakdown else None

    def baseline(path):
        if path not in baselines:
            baselines[path] = read_valid_run(truth, path, request.ignore_unknown_queries, request.trec_order)
        return baselines[path]

    for index, path in enumerate(request.runs):
        run, rankings = read_valid_run(truth, path, request.ignore_unknown_queries, request.trec_order)
        if request.rerank is not None and Path(path).resolve() != Path(request.rerank).resolve():
            check_pool(run, baseline(request.rerank)[0])
        name = request.names[index] if request.names else run.name
        rows.append(Scored(name, run, score(benchmark, truth, rankings, options, groups)))
    if request.oracle is not None:
        rankings = benchmark.oracle(truth.judgments, baseline(request.oracle)[1], **request.oracle_options)
        rows.append(Scored(ORACLE_NAME, None, score(benchmark, truth, rankings, options, groups)))
    return rows
