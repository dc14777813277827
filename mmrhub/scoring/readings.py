"""The same runs scored under every combination of the open rules' readings, as ``score_runs`` would score them one
combination at a time, but with the runs read, validated and pool-checked once and each oracle built once."""

import itertools
from dataclasses import replace

from mmrhub.declaration import Benchmark
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.oracle import ORACLE_NAME
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import Scored
from mmrhub.scoring.score import oracle_keywords
from mmrhub.scoring.score import read_runs
from mmrhub.scoring.score import score


def choices(benchmark: Benchmark, oracle: bool) -> list:
    """Every combination of the benchmark's single-choice options of the measures (or of the oracle), as dicts."""
    options = [option for option in benchmark.options if not option.many and option.oracle == oracle]
    return [dict(zip((o.name for o in options), values)) for values in itertools.product(*(o.choices for o in options))]


def combinations(benchmark: Benchmark) -> list:
    """Every combination of the benchmark's single-choice options, as (measure options, oracle options)."""
    return list(itertools.product(choices(benchmark, oracle=False), choices(benchmark, oracle=True)))


def score_every_reading(request: ScoringRequest, truth: Truth):
    """Yield (measure options, oracle options, rows) for every combination, the rows ``score_runs`` gives for it.

    The request's own readings are ignored (each combination sets them all); ``k`` is kept. A run row does not
    depend on the oracle's options, so it is scored once per reading of the measures; an oracle is built once per
    distinct set of its keywords (its options and the readings it follows)."""
    benchmark = request.benchmark
    read = read_runs(request, truth)
    groups = truth.groups() if request.breakdown else None
    k = {"k": request.measure_options["k"]} if "k" in request.measure_options else {}
    oracle_choices, baseline = choices(benchmark, oracle=True), read.oracle_baseline
    oracles = {}  # by the oracle's keywords: its own options and the readings it follows

    def oracle(measure_options, oracle_options):
        if baseline is None:
            return None
        keywords = oracle_keywords(replace(request, measure_options=measure_options, oracle_options=oracle_options))
        key = tuple(sorted(keywords.items()))
        if key not in oracles:
            oracles[key] = benchmark.oracle(truth.judgments, baseline, **keywords)
        return oracles[key]

    def scored(name, run, rankings, options):
        return Scored(name, run, score(benchmark, truth, rankings, options, groups))

    for measure_options in choices(benchmark, oracle=False):
        options = {**k, **measure_options}
        rows = [scored(name, run, rankings, options) for name, run, rankings in read.rows]
        for oracle_options in oracle_choices:
            reordered = oracle(measure_options, oracle_options)
            oracle_rows = [] if reordered is None else [scored(ORACLE_NAME, None, reordered, options)]
            yield measure_options, oracle_options, rows + oracle_rows
