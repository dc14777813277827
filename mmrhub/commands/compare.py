"""``mmrhub compare {mipr,m2kr} RUN [RUN ...]``: per-measure differences of every pair of runs (or of each run and a
baseline) with paired randomisation-test p-values, corrected across the pairs."""

import os

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import scoring_request
from mmrhub.commands.converters import permutations
from mmrhub.commands.converters import seed
from mmrhub.scoring import pandas_free
from mmrhub.scoring.compare.comparison import compare_runs
from mmrhub.scoring.compare.corrections import CORRECTIONS
from mmrhub.scoring.output.captions import compare_captions
from mmrhub.scoring.output.captions import footnote
from mmrhub.scoring.output.captions import print_notes
from mmrhub.scoring.output.captions import summary_caption
from mmrhub.scoring.output.payloads import check_json_target
from mmrhub.scoring.output.payloads import comparison_payload
from mmrhub.scoring.output.payloads import write_json
from mmrhub.scoring.output.tables import pair_tables
from mmrhub.scoring.output.tables import summary_table
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs

DESCRIPTION = """\
Each pair of runs (A before B on the command line), or each run against --baseline, gets a table: per measure the
means of A and B over the queries both define, B - A and the p-value of a two-sided paired randomisation test
(random sign flips of the per-query differences, the same sign matrix for every pair and measure). With more than
one pair, each measure's p-values are also given corrected across the pairs (a measure's tests corrected together,
as ranx's Tukey HSD test corrects per metric; measures are not pooled). ranx's compare with stat_test="fisher" runs
the same test on every pair, uncorrected, with p = hits / permutations where ours is (hits + 1) / (permutations +
1), and without a tolerance, so rounding loses some exact ties of discrete measures that we count. Runs sharing a
name (the file stem) are told apart as name, name (2), ... with a note."""


def register(subparsers) -> None:
    """Add ``compare`` and its per-benchmark subcommands."""
    parser = subparsers.add_parser("compare", help="compare runs query by query (paired randomisation test)")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"compare {benchmark.title} runs", description=DESCRIPTION)
        sub.add_argument(
            "runs", nargs="+", metavar="RUN", help="run files: two or more, or one or more with --baseline"
        )
        sub.add_argument(
            "--baseline",
            metavar="RUN",
            help="compare each RUN with this one (it may also be among the RUNs) instead of every pair",
        )
        sub.add_argument(
            "--correction",
            choices=CORRECTIONS,
            default="holm",
            help="how each measure's p-values are adjusted across the pairs (default: holm); one pair is left as is",
        )
        sub.add_argument(
            "--permutations", type=permutations, default=10000, help="random sign flips, 1 to 1,000,000 (default 10000)"
        )
        sub.add_argument(
            "--seed", type=seed, default=0, help="the sign flips' seed, the same for every pair (default 0)"
        )
        add_scoring_arguments(sub, benchmark, oracle=False)  # compare scores no oracle
        sub.set_defaults(func=run, breakdown=False)


def run_order(runs: list, baseline) -> list:
    """The runs as compared: the baseline first (listed once), or the RUNs as given."""
    if baseline is None:
        return list(runs)
    return [baseline] + [run for run in runs if os.path.realpath(run) != os.path.realpath(baseline)]


def check(args, runs: list) -> None:
    """Before any work: the number of runs (the flags' values are checked as they are parsed)."""
    if len(runs) < 2:
        what = "a RUN besides --baseline" if args.baseline else "two RUNs, or one RUN and --baseline"
        raise ValueError(f"compare needs at least {what}")


def run(args) -> int:
    """Score the runs and print a table per pair, then the footnote."""
    runs = run_order(args.runs, args.baseline)
    check(args, runs)
    request = scoring_request(args, runs=runs)
    check_json_target(args.json, request.inputs)
    with pandas_free.kept_out():
        truth = load_truth(request)
        rows = score_runs(request, truth)
        print_notes(truth, rows)
        comparison = compare_runs(rows, args.permutations, args.seed, args.correction, args.baseline is not None)
    if len(rows) > 2:  # then a table per pair is a lot to read: one table first
        print(f"{summary_table(comparison, rows)}\n\n{summary_caption(comparison)}\n")
    print("\n\n".join(pair_tables(comparison)))
    print(f"\n{footnote(comparison)}{compare_captions(request, truth, rows)}")
    if args.json:
        named = [{"name": row.name, "run": row.run.path} for row in rows]
        baseline = rows[0].name if args.baseline is not None else None
        write_json(args.json, comparison_payload(comparison, request.benchmark.name, named, baseline))
    return 0
