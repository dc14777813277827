"""``mmrhub evaluate {mipr,m2kr} RUN``: validate a run file and print its scores as a Markdown table."""

import sys

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.truth import default_k
from mmrhub.truth import load_truth
from mmrhub.truth import read_valid_run
from mmrhub.truth import score
from mmrhub.report import per_query_table
from mmrhub.report import table
from mmrhub.report import write_json
from mmrhub.runs import RunError
from mmrhub.runs import aligned
from mmrhub.runs import check_pool


def add_common_options(parser, benchmark: str) -> None:
    parser.add_argument("--data-dir", help=f"the {benchmark.upper()} data folder (default: the bundled sample)")
    parser.add_argument("--k", type=int, nargs="+", help=f"cutoffs (default: {' '.join(map(str, default_k(benchmark)))})")
    parser.add_argument("--json", metavar="OUT", help="also write aggregate and per-query values (in [0, 1]) to OUT")
    if benchmark == "mipr":
        parser.add_argument("--capped-recall", action="store_true", help="also report R-L1-capped@k (min(k, |L1|))")
    else:
        parser.add_argument(
            "--variants", nargs="+", default=["recall"], choices=["recall", "hit", "strict"],
            help="recall: the challenge's; hit: FLMR's Recall@K (any positive); strict: all positives",
        )


def register(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="score a run file (official JSON, TREC, or M2KR Kaggle CSV)")
    benchmarks = parser.add_subparsers(dest="benchmark", required=True)
    for benchmark in BENCHMARKS:
        sub = benchmarks.add_parser(benchmark, help=f"score a {benchmark.upper()} run")
        sub.add_argument("run", help="the run file")
        add_common_options(sub, benchmark)
        sub.add_argument("--per-query", action="store_true", help="also print every query's values")
        group = "--by-category" if benchmark == "mipr" else "--by-task"
        sub.add_argument(group, dest="breakdown", action="store_true", help="also print the means per group")
        sub.add_argument("--rerank", metavar="BASELINE", help="check each query's candidates are the baseline's pool")
        sub.set_defaults(func=run)


def options(args) -> dict:
    """Scoring options shared by evaluate, oracle and compare."""
    extra = {"capped_recall": args.capped_recall} if args.benchmark == "mipr" else {"variants": tuple(args.variants)}
    return {"k": tuple(args.k or default_k(args.benchmark)), **extra}


def json_payload(args, run, truth, result) -> dict:
    per_query = result.pop("per_query")
    groups = {key: result.pop(key) for key in ("by_category", "by_task") if key in result}
    rows = {qid: {name: values[i] for name, values in per_query.items() if name != "query_id"}
            for i, qid in enumerate(truth.query_ids)}
    return {"benchmark": args.benchmark, "run": run.path, "aggregate": result, **groups, "per_query": rows}


def run(args) -> int:
    try:
        truth = load_truth(args.benchmark, args.data_dir)
        run_file = read_valid_run(truth, args.run)
        if args.rerank:
            check_pool(run_file, read_valid_run(truth, args.rerank))
        result = score(truth, aligned(run_file, truth.query_ids), per_query=True, breakdown=args.breakdown, **options(args))
    except (RunError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(table([(run_file.name, result)]))
    for key, label in (("by_category", "Top-level category"), ("by_task", "Task")):
        if key in result:
            print()
            print(table(sorted(result[key].items()), label=label, extra=("num_queries",)))
    if args.per_query:
        print()
        print(per_query_table(result["per_query"], truth.query_ids))
    if args.json:
        write_json(args.json, json_payload(args, run_file, truth, result))
    return 0
