"""``mmrhub oracle {mipr,m2kr} BASELINE``: the Candidate-pool Oracle row alone (each pool reordered by true gain).

The same row as ``mmrhub evaluate ... --oracle BASELINE``.
"""

from mmrhub import pandas_free
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.evaluate import add_scoring_arguments
from mmrhub.commands.evaluate import json_payload
from mmrhub.commands.evaluate import load_truth
from mmrhub.commands.evaluate import print_notes
from mmrhub.commands.evaluate import sample_caption
from mmrhub.commands.evaluate import scoring_options
from mmrhub.scoring import score_runs
from mmrhub.tables import table
from mmrhub.tables import check_json_target
from mmrhub.tables import write_json


def register(subparsers) -> None:
    parser = subparsers.add_parser("oracle", help="score the ideal reordering of a baseline's candidate pools")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"{benchmark.title}: relevant items first, by grade")
        sub.add_argument("baseline", help="the baseline run whose pools are reordered")
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run, breakdown=False)


def run(args) -> int:
    check_json_target(args.json)
    with pandas_free.kept_out():
        return _run(args)


def _run(args) -> int:
    truth = load_truth(args)
    measures, oracle = scoring_options(args)
    rows = score_runs(args.benchmark, truth, [], oracle=args.baseline, options=measures, oracle_options=oracle,
                      ignore_unknown_queries=args.ignore_unknown_queries)
    print_notes(truth, rows)
    print(table([(row.name, row.result) for row in rows]) + sample_caption(args, truth))
    if args.json:
        write_json(args.json, json_payload(args, truth, rows, {**measures, **oracle}))
    return 0
