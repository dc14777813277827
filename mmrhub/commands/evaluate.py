"""``mmrhub evaluate {mipr,m2kr} RUN [RUN ...]``: validate run files and print one table, a row per run."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import scoring_request
from mmrhub.scoring import pandas_free
from mmrhub.scoring.output.captions import print_notes
from mmrhub.scoring.output.captions import print_table
from mmrhub.scoring.output.captions import table_captions
from mmrhub.scoring.output.payloads import check_json_target
from mmrhub.scoring.output.payloads import scores_payload
from mmrhub.scoring.output.payloads import write_json
from mmrhub.scoring.output.tables import FORMATS
from mmrhub.scoring.output.tables import per_query_table
from mmrhub.scoring.output.tables import scores_table
from mmrhub.scoring.output.tables import table
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs


def register(subparsers) -> None:
    """Add ``evaluate`` and its per-benchmark subcommands."""
    parser = subparsers.add_parser(
        "evaluate",
        help="score run files (official JSON, dict JSON as ranx writes it, TREC, M2KR Kaggle CSV; '-': "
        "standard input): one table",
    )
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"score {benchmark.title} runs")
        sub.add_argument(
            "runs",
            nargs="*",
            metavar="RUN",
            help=f"run files, each a row; '-' reads one from standard input (default: {benchmark.runs_help})",
        )
        sub.add_argument("--name", action="append", help="a row's name, once per run (default: the file's stem)")
        sub.add_argument("--oracle", metavar="BASELINE", help="add the Candidate-pool Oracle row of this run's pools")
        sub.add_argument(
            "--rerank", metavar="BASELINE", help="check that every other run ranks exactly this run's pools"
        )
        sub.add_argument(
            benchmark.breakdown.flag, dest="breakdown", action="store_true", help="also print the means per group"
        )
        sub.add_argument("--per-query", action="store_true", help="also print every query's values")
        sub.add_argument("--format", choices=FORMATS, default="markdown", help="the tables' format (default: markdown)")
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run)


def run(args) -> int:
    """Score the runs (or the ones shipped with the data) and print the table."""
    request = scoring_request(args, runs=args.runs)
    if not request.runs:
        request = request.with_shipped_runs()
    return print_scores(request, args)


def print_scores(request: ScoringRequest, args) -> int:
    """What ``evaluate`` and ``oracle`` do once they know what to score: the --json target checked before any work,
    the rows scored, the notes and the table printed (then the groups' and the queries' tables, if asked for), and
    --json written."""
    check_json_target(args.json, request.inputs)
    with pandas_free.kept_out():
        truth = load_truth(request)
        rows = score_runs(request, truth)
    print_notes(truth, rows)
    print_table(scores_table(rows, format=args.format), table_captions(request, truth, rows), args.format)
    breakdown = request.benchmark.breakdown
    for row in rows if request.breakdown else ():
        print(f"\n{row.name}:\n")
        groups = list(row.result[breakdown.key].items())  # in natural order (group_means)
        print(table(groups, label=breakdown.label, extra=("num_queries",), format=args.format))
    for row in rows if args.per_query else ():
        print(f"\n{row.name}, per query:\n")
        print(per_query_table(row.result["per_query"], format=args.format))
    if args.json:
        write_json(args.json, scores_payload(request, truth, rows))
    return 0
