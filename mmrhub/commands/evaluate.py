"""``mmrhub evaluate {mipr,m2kr} RUN [RUN ...]``: validate run files and print one table, a row per run."""

import sys

from mmrhub import pandas_free
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.scoring import score_runs
from mmrhub.tables import per_query_table
from mmrhub.tables import table
from mmrhub.tables import check_json_target
from mmrhub.tables import write_json


def add_scoring_arguments(parser, benchmark) -> None:
    """What every scoring command takes: the data, the cutoffs, the benchmark's options, --json."""
    parser.add_argument("--data-dir", help=f"the {benchmark.title} data folder (default: the bundled sample)")
    k = " ".join(map(str, benchmark.measures.DEFAULT_K))
    parser.add_argument("--k", type=int, nargs="+", help=f"cutoffs (default: {k})")
    for option in benchmark.options:
        flag = "--" + option.name.replace("_", "-")
        if option.many:
            parser.add_argument(flag, nargs="+", choices=option.choices, default=list(option.default), help=option.help)
        else:
            parser.add_argument(flag, choices=option.choices, default=option.default,
                                help=f"{option.help} (default: {option.default})")
    parser.add_argument(
        "--ignore-unknown-queries", action="store_true",
        help="set aside entries of queries that are not the benchmark's (e.g. another track's rows in a Kaggle "
        "file), saying how many; without it they are an error",
    )
    parser.add_argument("--json", metavar="OUT", help="also write every value (in [0, 1], aggregate and per query)")
    parser.set_defaults(benchmark=benchmark)


def scoring_options(args) -> dict:
    """The measures' keywords (cutoffs and options) and the oracle's, from the parsed arguments."""
    measures = {"k": tuple(args.k or args.benchmark.measures.DEFAULT_K)}
    oracle = {}
    for option in args.benchmark.options:
        value = getattr(args, option.name)
        (oracle if option.oracle else measures)[option.name] = tuple(value) if option.many else value
    return measures, oracle


def load_truth(args):
    """The benchmark's judgments from --data-dir, or from the bundled sample."""
    benchmark = args.benchmark
    data_dir = args.data_dir or benchmark.sample_dir
    return benchmark.read_truth(data_dir)


def sample_caption(args, truth) -> str:
    """Said under every table scored on the bundled sample, so its numbers are never taken for the benchmark's."""
    if args.data_dir is not None:
        return ""
    return (f"\n\n_Bundled {args.benchmark.title} sample ({len(truth.query_ids)} queries), not the benchmark: its "
            "numbers mean nothing. Pass --data-dir for the real data._")


def print_notes(truth, rows) -> None:
    notes = truth.notes + [note for row in rows if row.run is not None for note in row.run.notes]
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def json_payload(args, truth, rows, options) -> dict:
    runs = []
    for row in rows:
        result = dict(row.result)
        per_query = result.pop("per_query")
        groups = {args.benchmark.breakdown.key: result.pop(args.benchmark.breakdown.key)} if args.breakdown else {}
        query_ids = per_query.pop("query_id")
        values = {qid: {name: column[i] for name, column in per_query.items()} for i, qid in enumerate(query_ids)}
        runs.append({"name": row.name, "run": row.run.path if row.run else None, "aggregate": result, **groups,
                     "per_query": values})
    return {"benchmark": args.benchmark.name, "data_dir": str(args.data_dir or args.benchmark.sample_dir),
            "sample": args.data_dir is None, "options": options, "notes": truth.notes, "runs": runs}


def register(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="score run files (official JSON, TREC, M2KR Kaggle CSV): one table")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"score {benchmark.title} runs")
        sub.add_argument(
            "runs", nargs="*", metavar="RUN",
            help="run files, each a row (default: the runs shipped with the data, e.g. MIPR's two baselines, with "
            "the first one's oracle row: the seed's table)",
        )
        sub.add_argument("--name", action="append", help="a row's name, once per run (default: the file's stem)")
        sub.add_argument("--oracle", metavar="BASELINE", help="add the Candidate-pool Oracle row of this run's pools")
        sub.add_argument("--rerank", metavar="BASELINE", help="check that every other run ranks exactly this run's pools")
        sub.add_argument(benchmark.breakdown.flag, dest="breakdown", action="store_true", help="also print the means per group")
        sub.add_argument("--per-query", action="store_true", help="also print every query's values")
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run)


def use_shipped_runs(args) -> None:
    """No run named: score the runs shipped with the data, the first one's pools as candidates and oracle."""
    shipped = args.benchmark.runs_shipped_with(args.data_dir)
    args.runs = [str(path) for _, path in shipped]
    args.name = [name for name, _ in shipped]
    if len(shipped) > 1:
        args.rerank = args.rerank or args.runs[0]
        args.oracle = args.oracle or args.runs[0]


def run(args) -> int:
    check_json_target(args.json)
    with pandas_free.kept_out():
        return _run(args)


def _run(args) -> int:
    if not args.runs:
        use_shipped_runs(args)
    truth = load_truth(args)
    measures, oracle = scoring_options(args)
    options = {**measures, **oracle}
    rows = score_runs(
        args.benchmark, truth, args.runs, names=args.name, oracle=args.oracle, rerank=args.rerank, options=measures,
        oracle_options=oracle, breakdown=args.breakdown, ignore_unknown_queries=args.ignore_unknown_queries,
    )
    print_notes(truth, rows)
    print(table([(row.name, row.result) for row in rows]) + sample_caption(args, truth))
    breakdown = args.benchmark.breakdown
    for row in rows if args.breakdown else ():
        print(f"\n{row.name}:\n")
        groups = sorted(row.result[breakdown.key].items())
        print(table(groups, label=breakdown.label, extra=("num_queries",)))
    for row in rows if args.per_query else ():
        print(f"\n{row.name}, per query:\n")
        print(per_query_table(row.result["per_query"]))
    if args.json:
        write_json(args.json, json_payload(args, truth, rows, options))
    return 0
