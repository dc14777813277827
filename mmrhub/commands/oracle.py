"""``mmrhub oracle mipr BASELINE``: the candidate-pool oracle row (each query's pool reordered by true gain)."""

import sys

import numpy as np

from mmrhub.truth import load_truth
from mmrhub.truth import read_valid_run
from mmrhub.truth import score
from mmrhub.commands.evaluate import add_common_options
from mmrhub.commands.evaluate import json_payload
from mmrhub.commands.evaluate import options
from mmrhub.report import table
from mmrhub.report import write_json
from mmrhub.runs import RunError
from mmrhub.runs import aligned

ROW_NAME = "Candidate-pool Oracle"


def register(subparsers) -> None:
    parser = subparsers.add_parser("oracle", help="score the ideal reordering of a baseline's candidate pools")
    benchmarks = parser.add_subparsers(dest="benchmark", required=True)
    sub = benchmarks.add_parser("mipr", help="MIPR: L1 first, then L2, then the rest; ties keep the baseline order")
    sub.add_argument("baseline", help="the baseline run whose pools are reordered")
    add_common_options(sub, "mipr")
    sub.set_defaults(func=run)


def oracle_rankings(qrels, rankings) -> list:
    """Each pool sorted by gain, highest first; a stable sort keeps the baseline order within a grade."""
    depth = max(map(len, rankings), default=1) or 1
    gain, _ = qrels.judge(rankings, depth)
    order = np.argsort(-gain, axis=1, kind="stable")
    return [[ranking[i] for i in order[row, : len(ranking)]] for row, ranking in enumerate(rankings)]


def run(args) -> int:
    try:
        truth = load_truth(args.benchmark, args.data_dir)
        baseline = read_valid_run(truth, args.baseline)
        rankings = oracle_rankings(truth.prepared, aligned(baseline, truth.query_ids))
        result = score(truth, rankings, per_query=True, **options(args))
    except (RunError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(table([(ROW_NAME, result)]))
    if args.json:
        write_json(args.json, json_payload(args, baseline, truth, result))
    return 0
