"""``mmrhub leaderboard {mipr,m2kr} RUN [RUN ...] -o DIR``: a board folder (a Gradio Space) of runs scored as
``evaluate`` scores them; ``mmrhub leaderboard add DIR RUN``: one more entry."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import scoring_request
from mmrhub.commands.converters import permutations
from mmrhub.commands.converters import seed
from mmrhub.commands.converters import whole_number

DESCRIPTION = """\
Write a board folder DIR, a Gradio Space: the judgments (copied from --data-dir, or the bundled sample), one result
file per run (its full table as `mmrhub evaluate` prints it, per-group means, every query's values, the run's sha256
and what its record says), the published rows, and the page: the board with `mmrhub compare`'s letters (the same
test, sign flips and seed), a view per group, and a form that scores an uploaded run beside the board and opens a
pull request adding it. `mmrhub leaderboard add DIR RUN` adds an entry; `mmrhub push DIR org/name` publishes it;
`python app.py` in DIR starts the page locally."""

ADD_DESCRIPTION = """\
Score RUN as the board in DIR scores its entries (its judgments and options) and add it: one result file in
DIR/results. A name already on the board is refused."""


def register(subparsers) -> None:
    """Add ``leaderboard`` and its per-benchmark and ``add`` subcommands."""
    parser = subparsers.add_parser("leaderboard", help="a leaderboard Space of scored runs, or add a run to one")
    commands = parser.add_subparsers(dest="leaderboard_command", required=True, metavar="{mipr,m2kr,add}")
    for benchmark in BENCHMARKS.values():
        sub = commands.add_parser(benchmark.name, help=f"a board of {benchmark.title} runs", description=DESCRIPTION)
        sub.add_argument("runs", nargs="+", metavar="RUN", help="run files, an entry each")
        sub.add_argument("--output", "-o", required=True, metavar="DIR", help="the board folder to create")
        add_entry_arguments(sub)
        sub.add_argument(
            "--source",
            help="where the judgments come from, as the page says it (default: the bundled sample, or the data "
            "folder's name), e.g. the repository and commit they were taken from",
        )
        sub.add_argument(
            "--judgments-repo",
            metavar="ORG/NAME@COMMIT",
            help="the Space reads the judgment tables from this Hub dataset repo at this commit when it starts, "
            "instead of holding a copy; --data-dir must hold the same files (their sha256 are recorded and checked)",
        )
        sub.add_argument(
            "--permutations", type=permutations, default=10000, help="compare's sign flips (default 10000)"
        )
        sub.add_argument("--seed", type=seed, default=0, help="compare's seed (default 0)")
        sub.add_argument(
            "--max-upload-mb",
            type=whole_number(1, 4096),
            default=64,
            help="the largest run file the page takes, in MB as uploaded (default 64)",
        )
        add_scoring_arguments(sub, benchmark, oracle=False, json=False)
        sub.set_defaults(func=run, breakdown=True)
    add = commands.add_parser("add", help="add runs to a board folder", description=ADD_DESCRIPTION)
    add.add_argument("folder", metavar="DIR", help="the board folder (`mmrhub leaderboard BENCHMARK ... -o DIR`)")
    add.add_argument("runs", nargs="+", metavar="RUN", help="run files, an entry each")
    add_entry_arguments(add)
    add.set_defaults(func=run_add)


def add_entry_arguments(parser) -> None:
    """What each entry takes: its name and whether its rankings go with it."""
    parser.add_argument("--name", action="append", help="an entry's name, once per run (default: the file's stem)")
    parser.add_argument(
        "--with-rankings",
        action="store_true",
        help="also keep each run's rankings in its result file (by default only the scores and per-query values)",
    )


def run(args) -> int:
    """Build the board folder and say what it holds."""
    from mmrhub.leaderboard.build import build  # the wing: only when this command runs

    request = scoring_request(args, runs=args.runs)
    out = build(
        request,
        args.output,
        permutations=args.permutations,
        seed=args.seed,
        source=args.source or "",
        with_rankings=args.with_rankings,
        max_upload_bytes=args.max_upload_mb << 20,
        judgments_repo=args.judgments_repo or "",
    )
    print(f"wrote {out}: {len(request.runs)} entries; start it with `python app.py` there, publish it with "
          f"`mmrhub push {out} ORG/NAME`")  # fmt: skip
    return 0


def run_add(args) -> int:
    """Add the runs to the board and say which files were written."""
    from mmrhub.leaderboard.board import read_board
    from mmrhub.leaderboard.build import add

    name = read_board(args.folder).benchmark_name
    if name not in BENCHMARKS:
        raise ValueError(f"{args.folder}: a board of {name!r}, which is not one of {', '.join(BENCHMARKS)}.")
    for path in add(BENCHMARKS[name], args.folder, args.runs, tuple(args.name or ()), args.with_rankings):
        print(f"wrote {path}")
    return 0
