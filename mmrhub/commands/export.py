"""``mmrhub export``: write a benchmark as a script-free Hub dataset repo folder (Parquet + README.md card)."""

from mmrhub.commands.arguments import add_benchmark_argument
from mmrhub.commands.arguments import add_build_arguments
from mmrhub.commands.arguments import add_data_dir_argument
from mmrhub.commands.arguments import build_options
from mmrhub.export import FORMATS

DESCRIPTION = """\
Write a benchmark as a script-free Hub dataset repo folder OUT: a Parquet folder per config (images embedded)
and a README.md card, loadable with load_dataset(OUT, config); or MTEB's layout, or trec_eval qrels files
(--format). `mmrhub push OUT org/name` uploads it."""


def register(subparsers):
    """Add ``export``."""
    parser = subparsers.add_parser(
        "export",
        help="write a Hub-ready dataset repo folder (Parquet per config + card)",
        description=DESCRIPTION,
    )
    add_benchmark_argument(parser, help="the benchmark to export")
    parser.add_argument("out", help="the repo folder to create (written aside, then moved into place)")
    add_data_dir_argument(parser, urls=True)
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="hf",
        help="hf: the builder's configs; mteb: MTEB's retrieval layout; trec: the judgments as trec_eval qrels files",
    )
    parser.add_argument("--repo-id", help="the dataset repo the card's snippets name (default your-org/<benchmark>)")
    parser.add_argument("--metric-space", help="the metric Space named in the card (default your-org/<benchmark>)")
    parser.add_argument("--max-shard-size", help="largest Parquet file (default: datasets' own, 500MB)")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT once the new export is complete; only a folder an earlier export wrote (its "
        ".mmrhub-export lists every file it wrote) while it holds nothing else: a .git folder or a file you added "
        "makes it refuse, never the data folder or a folder above it",
    )
    add_build_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    """Export the benchmark and say where."""
    from mmrhub.export.repo import export  # imports datasets: only when exporting

    benchmark = args.benchmark
    out = export(
        benchmark,
        args.out,
        data_dir=args.data_dir,
        format=args.format,
        repo_id=args.repo_id,
        metric_space=args.metric_space,
        overwrite=args.overwrite,
        builder_options=build_options(benchmark, args),
        **({"max_shard_size": args.max_shard_size} if args.max_shard_size else {}),
    )
    print(f"wrote {out}")
    return 0
