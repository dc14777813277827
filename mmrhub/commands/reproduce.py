"""``mmrhub reproduce mipr --data-dir DIR``: which readings of the open metric rules reproduce the published table.

The runs shipped with the data (the embedding run, the reranked run, and the oracle of the embedding run's pools)
are scored under every combination of the benchmark's options; a combination reproduces the table when all of its
numbers (scores x100 to two decimals, and the counts the table states) are equal.
"""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_benchmark_argument
from mmrhub.commands.arguments import add_data_dir_argument
from mmrhub.scoring import pandas_free
from mmrhub.scoring.output.captions import sample_cannot_decide
from mmrhub.scoring.published_table import Difference
from mmrhub.scoring.published_table import differences
from mmrhub.scoring.published_table import published_target
from mmrhub.scoring.published_table import read_target
from mmrhub.scoring.readings import score_every_reading
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth


def register(subparsers) -> None:
    """Add ``reproduce``."""
    parser = subparsers.add_parser(
        "reproduce",
        help="find the interpretations of the open metric rules that reproduce the published table (the MIPR paper's)",
    )
    add_benchmark_argument(parser, {name: b for name, b in BENCHMARKS.items() if b.published_table})
    add_data_dir_argument(parser)
    parser.add_argument(
        "--target",
        metavar="JSON",
        help="a table to reproduce instead of the published one (MIPR: the paper's): a list of rows, each "
        '{measure: value x100}, in the order embedding, reranked, oracle; or {"rows": [...], '
        '"num_multi_category_queries": N}',
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    """Score the shipped runs under every combination of readings; print those that give the target table."""
    benchmark = args.benchmark
    target = read_target(args.target, benchmark) if args.target else published_target(benchmark)
    request = ScoringRequest(benchmark, args.data_dir).with_shipped_runs()
    with pandas_free.kept_out():
        truth = load_truth(request)
        outcomes = [
            ({**measure_options, **oracle_options}, differences(target, rows))
            for measure_options, oracle_options, rows in score_every_reading(request, truth)
        ]
    fewest = min(len(found) for _, found in outcomes)
    closest = [(options, found) for options, found in outcomes if len(found) == fewest]
    if request.sample and target.published:
        print(sample_cannot_decide(target.name))
        print(f"For illustration only, on the sample's simulated runs:\n  {summary(target, len(outcomes), closest)}")
        return 0
    print(summary(target, len(outcomes), closest))
    for options, found in closest:
        print("  " + " ".join(f"--{name.replace('_', '-')} {value}" for name, value in options.items()))
        for difference in found:
            print(f"    {describe(difference, 'published' if target.published else 'target')}")
    return 0 if fewest == 0 else 1


def summary(target, combinations: int, closest: list) -> str:
    """One line: how many combinations reproduce the whole table, or how close the closest come."""
    numbers = f"{target.size} numbers of {target.name}"
    if not closest[0][1]:
        return f"{len(closest)} of {combinations} combinations reproduce all {numbers}."
    which = "the closest matches" if len(closest) == 1 else f"the {len(closest)} closest, tied, match"
    return f"None of {combinations} combinations reproduces all {numbers}; {which} {target.size - len(closest[0][1])}."


def describe(difference: Difference, theirs: str) -> str:
    """A number not reproduced, as ``row measure: ours X, published Y``."""
    if difference.row is None:  # a count
        return f"{difference.measure}: ours {difference.ours:,}, {theirs} {difference.theirs:,}"
    ours, wanted = (value if value is None else f"{value:.2f}" for value in (difference.ours, difference.theirs))
    return f"{difference.row} {difference.measure}: ours {ours}, {theirs} {wanted}"
