"""``mmrhub compare {mipr,m2kr} RUN_A RUN_B``: per-measure differences with paired randomisation-test p-values."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import scoring_request
from mmrhub.scoring import pandas_free
from mmrhub.scoring.output import print_notes
from mmrhub.scoring.output import sample_caption
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs
from mmrhub.scoring.significance import compare
from mmrhub.scoring.tables import cell
from mmrhub.scoring.tables import check_json_target
from mmrhub.scoring.tables import write_json


def register(subparsers) -> None:
    """Add ``compare`` and its per-benchmark subcommands."""
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


def run(args) -> int:
    """Score both runs and print each measure's means, difference and p-value."""
    request = scoring_request(args, runs=(args.run_a, args.run_b))
    check_json_target(args.json, request.inputs)
    with pandas_free.kept_out():
        truth = load_truth(request)
        rows = score_runs(request, truth)
        print_notes(truth, rows)
        compared = compare(rows, args.permutations, args.seed)
    print(f"| Measure | {rows[0].name} | {rows[1].name} | B - A | p |")
    print("|---|---:|---:|---:|---:|")
    for name, a, b, delta, p in compared:
        shown = "-" if delta is None else f"{100 * delta:+.2f}"
        print(f"| {name} | {cell(a)} | {cell(b)} | {shown} | {'-' if p is None else f'{p:.4f}'} |")
    print(
        f"\np: paired randomisation test, two-sided, {args.permutations} sign flips (seed {args.seed}); "
        "scores x100; SC-R-L1@k* has no per-query form and is not tested." + sample_caption(request, truth)
    )
    if args.json:
        keys = ("measure", "a", "b", "difference", "p")
        payload = {
            "benchmark": request.benchmark.name,
            "run_a": args.run_a,
            "run_b": args.run_b,
            "permutations": args.permutations,
            "seed": args.seed,
            "measures": [dict(zip(keys, row)) for row in compared],
        }
        write_json(args.json, payload)
    return 0
