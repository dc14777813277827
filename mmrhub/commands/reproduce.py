"""``mmrhub reproduce mipr --data-dir DIR``: which readings of the open metric rules reproduce the seed's table.

The runs shipped with the data (the embedding run, the reranked run, and the oracle of the embedding run's pools)
are scored under every combination of the benchmark's options; a combination reproduces the table when all of its
numbers (x100, two decimals) are equal.
"""

import itertools
import json
from pathlib import Path

from dataclasses import replace

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.scoring import pandas_free
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs


def register(subparsers) -> None:
    """Add ``reproduce``."""
    parser = subparsers.add_parser("reproduce", help="find the readings of the open rules that reproduce the seed's table")
    parser.add_argument("benchmark", choices=[name for name, b in BENCHMARKS.items() if b.seed_table])
    parser.add_argument("--data-dir", help="the official data, with its bundled runs (default: the bundled sample)")
    parser.add_argument("--target", metavar="JSON", help="a table to reproduce instead of the seed's: a list of rows, "
                        "each {measure: value x100}, in the order embedding, reranked, oracle")
    parser.set_defaults(func=run)


def combinations(benchmark):
    """Every combination of the benchmark's single-choice options, as (measure options, oracle options)."""
    options = [option for option in benchmark.options if not option.many]
    for values in itertools.product(*(option.choices for option in options)):
        chosen = dict(zip(options, values))
        yield ({o.name: v for o, v in chosen.items() if not o.oracle}, {o.name: v for o, v in chosen.items() if o.oracle})


def table_of(rows, measures) -> list:
    """The rows' values of ``measures``, x100 and rounded to two decimals as the published tables are."""
    return [[None if row.result[m] is None else round(100 * row.result[m], 2) for m in measures] for row in rows]


def run(args) -> int:
    """Score the shipped runs under every combination of readings; print those that give the target table."""
    with pandas_free.kept_out():
        return _search(BENCHMARKS[args.benchmark], args.data_dir, args.target)


def _search(benchmark, data_dir, target_path) -> int:
    target = json.loads(Path(target_path).read_text(encoding="utf-8")) if target_path else benchmark.seed_table
    measures = list(target[0])
    wanted = [[row[m] for m in measures] for row in target]
    shipped = ScoringRequest(benchmark, data_dir).with_shipped_runs()
    truth = load_truth(shipped)
    matches, closest = [], (-1, None)
    for measure_options, oracle_options in combinations(benchmark):
        request = replace(shipped, measure_options=measure_options, oracle_options=oracle_options)
        rows = score_runs(request, truth)
        got = table_of(rows, measures)
        equal = sum(a == b for got_row, want_row in zip(got, wanted) for a, b in zip(got_row, want_row))
        options = {**measure_options, **oracle_options}
        if equal == len(measures) * len(wanted):
            matches.append(options)
        closest = max(closest, (equal, options), key=lambda pair: pair[0])
    print(f"{len(matches)} of {len(list(combinations(benchmark)))} combinations reproduce all "
          f"{len(measures) * len(wanted)} numbers of the {'target' if target_path else 'seed'} table.")
    for options in matches:
        print("  " + " ".join(f"--{name.replace('_', '-')} {value}" for name, value in options.items()))
    if not matches:
        equal, options = closest
        print(f"None does. The closest, {', '.join(f'{k}={v}' for k, v in options.items())}, "
              f"matches {equal} of {len(measures) * len(wanted)} numbers.")
    return 0 if matches else 1
