"""``mmrhub mteb {mipr,m2kr} --model NAME``: any MTEB model on a benchmark through ``mteb.evaluate``, its
predictions written as a run and scored with the benchmark's full metrics (mteb imported only in run)."""

from mmrhub.commands.arguments import add_benchmark_argument
from mmrhub.commands.arguments import add_build_arguments
from mmrhub.commands.arguments import add_data_dir_argument
from mmrhub.commands.arguments import build_options
from mmrhub.commands.converters import positive_int
from mmrhub.mteb.pipeline import DEFAULT_RESULTS
from mmrhub.mteb.pipeline import DEFAULT_TOP_K
from mmrhub.mteb.pipeline import MtebOptions
from mmrhub.mteb.pipeline import run as run_pipeline


def register(subparsers) -> None:
    """Add ``mteb``."""
    parser = subparsers.add_parser(
        "mteb",
        help="run any MTEB model through mteb.evaluate, write its predictions as a run, print the full table "
        "(needs the mteb extra)",
    )
    add_benchmark_argument(parser)
    parser.add_argument("--model", required=True, help="an MTEB model name, as mteb.get_model takes it")
    parser.add_argument("--revision", help="the model's revision (default: the one MTEB registers)")
    parser.add_argument("--device", help="where the model runs (default: MTEB's choice)")
    add_data_dir_argument(parser)
    parser.add_argument(
        "--export",
        metavar="DIR",
        help="an export of --data-dir in MTEB's layout (mmrhub export ... --format mteb), or its Hub repo id "
        "(default: exported to a temporary folder, removed afterwards)",
    )
    parser.add_argument("--output", "-o", help="run file to write (default: runs/<benchmark>_<model>_mteb.json)")
    parser.add_argument("--results", default=DEFAULT_RESULTS, help=f"MTEB's own results (default: {DEFAULT_RESULTS})")
    parser.add_argument(
        "--top-k",
        type=positive_int,
        default=DEFAULT_TOP_K,
        help=f"documents ranked per query, the run's depth (default: {DEFAULT_TOP_K})",
    )
    parser.add_argument("--batch-size", type=positive_int, default=32, help="MTEB's encoding batch size (default: 32)")
    add_build_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    """Export, evaluate, write and score."""
    benchmark = args.benchmark
    return run_pipeline(
        MtebOptions(
            benchmark=benchmark,
            model=args.model,
            revision=args.revision,
            device=args.device,
            data_dir=args.data_dir,
            export=args.export,
            output=args.output,
            results=args.results,
            top_k=args.top_k,
            batch_size=args.batch_size,
            builder_options=build_options(benchmark, args),
        )
    )
