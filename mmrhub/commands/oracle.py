"""``mmrhub oracle {mipr,m2kr} BASELINE``: the Candidate-pool Oracle row alone (each pool reordered by true gain).

The same row as ``mmrhub evaluate ... --oracle BASELINE``.
"""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import scoring_request
from mmrhub.commands.evaluate import print_scores
from mmrhub.scoring.output.tables import FORMATS


def register(subparsers) -> None:
    """Add ``oracle`` and its per-benchmark subcommands."""
    parser = subparsers.add_parser("oracle", help="score the ideal reordering of a baseline's candidate pools")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"{benchmark.title}: {benchmark.oracle_help}")
        sub.add_argument("baseline", help="the baseline run whose pools are reordered")
        sub.add_argument("--format", choices=FORMATS, default="markdown", help="the table's format (default: markdown)")
        add_scoring_arguments(sub, benchmark)
        sub.set_defaults(func=run, breakdown=False, per_query=False)


def run(args) -> int:
    """Score the oracle of the baseline's pools and print its row, as ``evaluate`` prints its rows."""
    return print_scores(scoring_request(args, oracle=args.baseline), args)
