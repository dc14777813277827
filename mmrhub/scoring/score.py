"""Scoring runs, in one place for every command: read, validate, score.

Only the tables scoring needs are read (``mmrhub.scoring.judgments``), never images, and ``datasets`` is not
imported.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.cores import usable_cores
from mmrhub.declaration import Benchmark
from mmrhub.scoring.groups import group_means
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.oracle import ORACLE_NAME
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.runs.kaggle import restore_stripped_ids
from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.runs.source import STDIN
from mmrhub.scoring.runs.validation import check_pool
from mmrhub.scoring.runs.validation import missing_queries_of
from mmrhub.scoring.runs.validation import validate


@dataclass
class Scored:
    """One row of a table: a run (None for the oracle) and ``evaluate_run``'s result, per-query values included;
    ``missing``: the judged queries the run lacks, scored 0 (``--missing-queries zero``)."""

    name: str
    run: Optional[Run]
    result: dict
    missing: int = 0


def load_truth(request: ScoringRequest) -> Truth:
    """The benchmark's judgments from the request's data folder (or the bundled sample)."""
    return request.benchmark.read_truth(request.folder)


def read_valid_run(request: ScoringRequest, truth: Truth, path):
    """(run, its rankings aligned with ``truth.query_ids``), read and checked as ``request`` says (its TREC order,
    unknown and missing queries, and whether the bundled sample is scored); a RunError names every problem found,
    or, for a run that is not of the data scored (``refuse_run_of_other_data``), says so in one line."""
    title = request.benchmark.title
    run = read_run(path, request.trec_order)
    if run.format == "kaggle":
        restore_stripped_ids(run, truth.corpus_ids)
        if not truth.kaggle_csv:
            run.notes.append(
                f"{run.path} is a Kaggle CSV, M2KR's submission format: it is scored against {title} as its lists "
                "of ids, without scores."
            )
    refuse_run_of_other_data(run, truth, title, request.sample, request.ignore_unknown_queries)
    return run, validate(run, truth, request.ignore_unknown_queries, request.missing_queries)


def refuse_run_of_other_data(run: Run, truth: Truth, title: str, sample: bool, ignore_unknown_queries: bool) -> None:
    """One line, instead of a line per query, for a run that is not of the data scored.

    On the bundled sample (no --data-dir given): a run with queries the sample lacks, whatever the overlap; with
    --ignore-unknown-queries, one whose other entries rank ids the sample lacks. Most likely it is a run of the real
    data and --data-dir was forgotten. On a data folder: a run none of whose queries is the benchmark's (a run of
    the other benchmark, or of another split); a partial overlap gets validate's list."""
    benchmark_queries = pa.concat_arrays([truth.query_ids, truth.unjudged_query_ids])
    known = pc.is_in(run.query_ids, value_set=benchmark_queries)
    unknown = len(known) - (pc.sum(known).as_py() or 0)
    if sample and unknown:
        found = f"{unknown:,} of its {len(known):,} queries"
        if ignore_unknown_queries and unknown < len(known):  # the rest is scored, unless it ranks other data's ids
            ranked = pc.array_take(known, pc.list_parent_indices(run.rankings))  # per ranked id: its entry is kept
            stray = pc.sum(pc.and_(ranked, pc.invert(pc.is_in(run.rankings.flatten(), value_set=truth.corpus_ids))))
            if not stray.as_py():
                return
            found += f" (set aside: --ignore-unknown-queries) and {stray.as_py():,} ids the others rank"
        raise RunError(
            f"{run.path}: {found} are not in {sample_scored(title, truth)}: pass --data-dir DIR to score the run "
            f"against {title}'s data."
        )
    if not sample and not ignore_unknown_queries and unknown and unknown == len(known):
        raise RunError(
            f"{run.path}: none of its {len(known)} queries (e.g. {run.query_ids[0].as_py()!r}) is a query of "
            f"{title}: is it a run of another benchmark? Score it with that benchmark's command, or pass "
            "--ignore-unknown-queries to set such entries aside."
        )


def measure_names(result: dict) -> list:
    """The measures of a result: float values, or None where undefined (counts are ints, groups are dicts)."""
    return [name for name, value in result.items() if value is None or isinstance(value, float)]


def sample_scored(title: str, truth: Truth) -> str:
    """What was scored when no --data-dir was given, as the lines on a run that does not fit it name it."""
    return f"the bundled {title} sample ({len(truth.query_ids)} queries), which was scored as no --data-dir was given"


def score(benchmark: Benchmark, truth: Truth, rankings, options: dict, groups=None) -> dict:
    """The metric module's ``evaluate_run`` with per-query values, and the means per group if ``groups`` labels
    each judged query."""
    result = benchmark.measures.evaluate_run(truth.judgments, rankings, per_query=True, **options)
    if groups is not None:
        result[benchmark.breakdown.key] = group_means(result["per_query"], groups)
    return result


@dataclass
class ReadRuns:
    """A request's runs read and validated, pools checked: (name, run, rankings) per row, the rankings whose
    pools the oracle reorders (None: no oracle row) and how many judged queries that baseline lacks (scored 0)."""

    rows: list
    oracle_baseline: Optional[pa.ListArray] = None
    oracle_missing: int = 0


class ReadAhead:
    """Run files read and validated on every core, each once (by resolved path: a file named as a run and as the
    baseline is read once); ``get(path)`` waits for its result, a problem raised there, in the order asked.

    Files of at most ``CONCURRENT_BYTES`` are read ahead on a thread per core (pyarrow's parsers and numpy let go
    of the GIL); a larger one, or standard input, is read when asked for, alone, so at most one large run's
    transient buffers are held at a time (a large JSON run is parsed on every core already)."""

    CONCURRENT_BYTES = 32 << 20

    def __init__(self, read, paths):
        self.read, self.results = read, {}
        ahead = {}
        for path in paths:
            if path is not None and str(path) != STDIN and self.key(path) not in ahead:
                size = os.stat(path).st_size if os.path.isfile(path) else None
                if size is not None and size <= self.CONCURRENT_BYTES:
                    ahead[self.key(path)] = path
        self.pool = ThreadPoolExecutor(min(usable_cores(), len(ahead))) if len(ahead) > 1 else None
        self.futures = {key: self.pool.submit(read, path) for key, path in ahead.items()} if self.pool else {}

    @staticmethod
    def key(path):
        """What names one file: its resolved path, or standard input."""
        return STDIN if str(path) == STDIN else Path(path).resolve()

    def get(self, path):
        """``read(path)``, read once; what it raised is raised here."""
        key = self.key(path)
        if key not in self.results:
            future = self.futures.get(key)
            self.results[key] = future.result() if future is not None else self.read(path)
        return self.results[key]

    def __enter__(self):
        return self.get

    def __exit__(self, *exc):
        if self.pool is not None:  # reads no longer wanted (a problem came first) are not started
            self.pool.shutdown(wait=True, cancel_futures=True)


def read_runs(request: ScoringRequest, truth: Truth) -> ReadRuns:
    """Each run file read and validated once, its pools checked against ``request.rerank``'s."""
    if request.names and len(request.names) != len(request.runs):
        raise ValueError(
            f"--name was given {len(request.names)} time(s) for {len(request.runs)} run(s): give one name per run."
        )
    repeated = sorted({name for name in request.names if request.names.count(name) > 1})
    if repeated:
        raise ValueError(f"--name {repeated[0]!r} is given twice: give each run its own name.")
    if [*request.runs, *{request.oracle, request.rerank} - {None}].count(STDIN) > 1:
        raise ValueError(f"standard input ('{STDIN}') can be read once: give it as one run at most.")

    def read(path):
        return read_valid_run(request, truth, path)

    with ReadAhead(read, [*request.runs, request.rerank, request.oracle]) as read_once:
        return _read_in_order(request, truth, read_once)


def _read_in_order(request: ScoringRequest, truth: Truth, read_once) -> ReadRuns:
    """Each run's row and pool check in the order given, so the first problem named is the same whichever read
    finished first."""
    rows = []
    for index, path in enumerate(request.runs):
        run, rankings = read_once(path)
        if request.rerank is not None and Path(path).resolve() != Path(request.rerank).resolve():
            check_pool(run, read_once(request.rerank)[0])
        rows.append((request.names[index] if request.names else run.name, run, rankings))
    if request.oracle is None:
        return ReadRuns(rows)
    baseline, rankings = read_once(request.oracle)
    return ReadRuns(rows, rankings, missing_count(request, baseline, truth))


def score_runs(request: ScoringRequest, truth: Truth) -> list:
    """A row per run file (named by ``request.names`` or the file stem), then the oracle row if asked for."""
    benchmark, options = request.benchmark, request.measure_options
    read = read_runs(request, truth)
    groups = truth.groups() if request.breakdown else None
    rows = [
        Scored(name, run, score(benchmark, truth, rankings, options, groups), missing_count(request, run, truth))
        for name, run, rankings in read.rows
    ]
    name_rows(rows)
    if read.oracle_baseline is not None:
        rankings = benchmark.oracle(truth.judgments, read.oracle_baseline, **oracle_keywords(request))
        rows.append(Scored(ORACLE_NAME, None, score(benchmark, truth, rankings, options, groups), read.oracle_missing))
    return rows


def missing_count(request: ScoringRequest, run: Run, truth: Truth) -> int:
    """How many judged queries ``run`` lacks, each scored 0 (only ``--missing-queries zero`` lets a run lack any)."""
    return len(missing_queries_of(run, truth)) if request.missing_queries == "zero" else 0


def oracle_keywords(request: ScoringRequest) -> dict:
    """The oracle's own options, and the readings of the measures' rules that it follows too."""
    options = request.measure_options
    follows = {name: options[name] for name in request.benchmark.oracle_readings if name in options}
    return {**follows, **request.oracle_options}


def name_rows(rows: list) -> None:
    """Keep each run's row name (its ``--name`` or its file stem), but one that repeats gets " (2)", " (3)"... and a
    note, so two rows never share a name."""
    seen = {}
    for row in rows:
        name = row.name
        seen[name] = seen.get(name, 0) + 1
        row.name = name if seen[name] == 1 else f"{name} ({seen[name]})"
        if row.name != name:
            row.run.notes.append(f"two runs are named {name!r}: {row.run.path} is the row {row.name!r}; pass --name.")
