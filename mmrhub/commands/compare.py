"""``mmrhub compare {mipr,m2kr} RUN_A RUN_B``: per-measure differences with paired randomisation-test p-values."""

import numpy as np

from mmrhub import pandas_free
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.evaluate import add_scoring_arguments
from mmrhub.commands.evaluate import load_truth
from mmrhub.commands.evaluate import print_notes
from mmrhub.commands.evaluate import sample_caption
from mmrhub.commands.evaluate import scoring_options
from mmrhub.scoring import score_runs
from mmrhub.significance import paired_randomisation_p
from mmrhub.tables import cell
from mmrhub.tables import check_json_target
from mmrhub.tables import write_json


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="compare two runs query by query (paired randomisation test)")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"compare two {benchmark.title} runs")
        sub.add_argument("run_a")
        sub.add_argument("run_b")
        sub.add_argument("--permutations", type=int, default=10000, help="random sign flips (default 10000)")
        sub.add_argument("--seed", type=int, default=0)
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run, breakdown=False)


def compare(rows, permutations: int, seed: int) -> list:
    """(measure, mean A, mean B, B - A, p) for every per-query measure, over the queries both runs define."""
    a, b = rows[0].result["per_query"], rows[1].result["per_query"]
    compared = []
    for name in a:
        if name == "query_id":
            continue
        pairs = np.array([(x, y) for x, y in zip(a[name], b[name]) if x is not None and y is not None], dtype=float)
        if not len(pairs):
            compared.append((name, None, None, None, None))
            continue
        mean_a, mean_b = pairs.mean(axis=0)
        compared.append((name, mean_a, mean_b, mean_b - mean_a, paired_randomisation_p(pairs[:, 0], pairs[:, 1], permutations, seed)))
    return compared


def run(args) -> int:
    check_json_target(args.json)
    with pandas_free.kept_out():
        return _run(args)


def _run(args) -> int:
    truth = load_truth(args)
    measures, _ = scoring_options(args)
    rows = score_runs(args.benchmark, truth, [args.run_a, args.run_b], options=measures,
                      ignore_unknown_queries=args.ignore_unknown_queries)
    print_notes(truth, rows)
    compared = compare(rows, args.permutations, args.seed)
    print(f"| Measure | {rows[0].name} | {rows[1].name} | B - A | p |")
    print("|---|---:|---:|---:|---:|")
    for name, a, b, delta, p in compared:
        shown = "-" if delta is None else f"{100 * delta:+.2f}"
        print(f"| {name} | {cell(a)} | {cell(b)} | {shown} | {'-' if p is None else f'{p:.4f}'} |")
    print(f"\np: paired randomisation test, two-sided, {args.permutations} sign flips (seed {args.seed}); "
          "scores x100; SC-R-L1@k* has no per-query form and is not tested." + sample_caption(args, truth))
    if args.json:
        keys = ("measure", "a", "b", "difference", "p")
        write_json(args.json, {"benchmark": args.benchmark.name, "run_a": args.run_a, "run_b": args.run_b,
                               "permutations": args.permutations, "seed": args.seed,
                               "measures": [dict(zip(keys, row)) for row in compared]})
    return 0
