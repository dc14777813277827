"""``mmrhub compare RUN_A RUN_B``: per-measure differences with paired randomisation-test p-values."""

import sys

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.truth import load_truth
from mmrhub.truth import read_valid_run
from mmrhub.truth import score
from mmrhub.commands.evaluate import options
from mmrhub.report import write_json
from mmrhub.runs import RunError
from mmrhub.runs import aligned
from mmrhub.significance import paired_randomisation_p


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="compare two runs query by query (paired randomisation test)")
    parser.add_argument("run_a")
    parser.add_argument("run_b")
    parser.add_argument("--benchmark", choices=BENCHMARKS, default="mipr", help="default: mipr")
    parser.add_argument("--permutations", type=int, default=10000, help="random sign flips (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(func=run, capped_recall=False, variants=["recall"])
    parser.add_argument("--data-dir", help="the benchmark's data folder (default: the bundled sample)")
    parser.add_argument("--k", type=int, nargs="+", help="cutoffs (default: the benchmark's)")
    parser.add_argument("--json", metavar="OUT", help="also write the comparison to OUT")


def compare(truth, run_a, run_b, permutations, seed, scoring) -> list:
    """(measure, A, B, B - A, p) for every per-query measure."""
    results = [score(truth, aligned(r, truth.query_ids), per_query=True, **scoring)["per_query"] for r in (run_a, run_b)]
    rows = []
    for name in results[0]:
        if name == "query_id":
            continue
        a, b = results[0][name], results[1][name]
        mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
        rows.append((name, mean_a, mean_b, mean_b - mean_a, paired_randomisation_p(a, b, permutations, seed)))
    return rows


def run(args) -> int:
    try:
        truth = load_truth(args.benchmark, args.data_dir)
        run_a, run_b = read_valid_run(truth, args.run_a), read_valid_run(truth, args.run_b)
        rows = compare(truth, run_a, run_b, args.permutations, args.seed, options(args))
    except (RunError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"| Measure | {run_a.name} | {run_b.name} | B - A | p |")
    print("|---|---:|---:|---:|---:|")
    for name, a, b, delta, p in rows:
        print(f"| {name} | {100 * a:.2f} | {100 * b:.2f} | {100 * delta:+.2f} | {p:.4f} |")
    print(f"\np: paired randomisation test, two-sided, {args.permutations} sign flips (seed {args.seed}); "
          "scores x100; SC-R-L1@k* has no per-query form and is not tested.")
    if args.json:
        keys = ("measure", "a", "b", "difference", "p")
        write_json(args.json, {"benchmark": args.benchmark, "run_a": run_a.path, "run_b": run_b.path,
                               "permutations": args.permutations, "seed": args.seed,
                               "measures": [dict(zip(keys, row)) for row in rows]})
    return 0
