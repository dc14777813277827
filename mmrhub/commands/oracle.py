"""``mmrhub oracle {mipr,m2kr} BASELINE``: the Candidate-pool Oracle row alone (each pool reordered by true gain).

The same row as ``mmrhub evaluate ... --oracle BASELINE``.
"""

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
from mmrhub.scoring.output.tables import scores_table
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs


def register(subparsers) -> None:
    """Add ``oracle`` and its per-benchmark subcommands."""
    parser = subparsers.add_parser("oracle", help="score the ideal reordering of a baseline's candidate pools")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"{benchmark.title}: {benchmark.oracle_help}")
        sub.add_argument("baseline", help="the baseline run whose pools are reordered")
        sub.add_argument("--format", choices=FORMATS, default="markdown", help="the table's format (default: markdown)")
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run, breakdown=False)


def run(args) -> int:
    """Score the oracle of the baseline's pools and print its row."""
    request = scoring_request(args, oracle=args.baseline)
    check_json_target(args.json, request.inputs)
    with pandas_free.kept_out():
        truth = load_truth(request)
        rows = score_runs(request, truth)
    print_notes(truth, rows)
    print_table(scores_table(rows, format=args.format), table_captions(request, truth, rows), args.format)
    if args.json:
        write_json(args.json, scores_payload(request, truth, rows))
    return 0
