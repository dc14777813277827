"""The arguments ``retrieve``, ``rerank`` and ``baseline`` share, and the retrieve wing's options they become."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve.options import DTYPES
from mmrhub.retrieve.options import DataOptions
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RunOptions
from mmrhub.retrieve.options import default_num_workers


def add_data_arguments(parser) -> None:
    """The benchmark and where its data is."""
    parser.add_argument("benchmark", choices=list(BENCHMARKS))
    parser.add_argument("--data-dir", help="the benchmark's data folder or URL (default: the bundled sample)")
    parser.add_argument("--split", help="split to load (default: the benchmark's own, test / train)")
    parser.add_argument(
        "--images-dir", help="M2KR: the folder of the image archives, if not DATA_DIR/images or DATA_DIR"
    )


def add_output_argument(parser) -> None:
    """Where the run is written."""
    parser.add_argument("--output", "-o", help="run file to write (default: runs/<benchmark>_<model>.json)")


def add_dtype_argument(group) -> None:
    """The model's dtype."""
    group.add_argument("--dtype", choices=DTYPES, default="auto", help="auto: bfloat16 on CUDA, float32 on CPU")


def add_device_arguments(group) -> None:
    """The DataLoader workers and the device."""
    group.add_argument(
        "--num-workers",
        type=int,
        default=default_num_workers(),
        help="DataLoader workers decoding images (default: 4, or fewer on a smaller machine)",
    )
    group.add_argument("--device", help="default: cuda:<local rank> when CUDA is available, else cpu")


def add_cache_arguments(group, what: str, default: str) -> None:
    """Where ``what`` is cached, and the switch that turns the cache off."""
    group.add_argument("--cache-dir", help=f"{what} cache (default: {default})")
    group.add_argument("--no-cache", action="store_true", help=f"neither read nor write cached {what}s")


def add_reranker_arguments(group, batch_size: int = 16) -> None:
    """The reranker's options (all but --model); ``mmrhub baseline`` shares them with ``mmrhub rerank``."""
    group.add_argument("--revision", help="Hub revision (branch, tag or commit) of the reranker")
    add_dtype_argument(group)
    group.add_argument("--max-length", type=int, help="max tokens of a (query, candidate) input (default: the model's)")
    group.add_argument("--prompt", help="instruction given to the reranker (default: the model's own)")
    group.add_argument(
        "--batch-size", type=int, default=batch_size, help=f"pairs per forward pass (default {batch_size})"
    )
    group.add_argument(
        "--top-n",
        type=int,
        help="rerank only the first N candidates of each pool; the rest keep "
        "their baseline order after them (default: the whole pool)",
    )
    add_device_arguments(group)
    group.add_argument(
        "--chunk-queries",
        type=int,
        default=64,
        help="queries per cached chunk of scores: an interrupted rerank resumes at the last chunk written",
    )
    add_cache_arguments(group, "pair score", "$HF_HOME/mmrhub/rerank")


def add_run_file_arguments(parser) -> None:
    """Whether the run is scored, and where the per-phase timings go."""
    parser.add_argument("--no-eval", action="store_true", help="write the run without scoring it")
    parser.add_argument("--stats-json", metavar="PATH", help="also write per-phase timings as JSON")


def data_options(args) -> DataOptions:
    """The benchmark's declaration and its data folder, split and archives from the parsed arguments."""
    return DataOptions(BENCHMARKS[args.benchmark], args.data_dir, args.split, args.images_dir)


def run_options(args, cache_dir=None) -> RunOptions:
    """Device, dtype, workers and cache from the parsed arguments; ``cache_dir`` overrides --cache-dir."""
    return RunOptions(
        device=args.device,
        dtype=args.dtype,
        num_workers=args.num_workers,
        cache_dir=cache_dir or args.cache_dir,
        use_cache=not args.no_cache,
    )


def output_options(args) -> OutputOptions:
    """Run path, scoring and timings from the parsed arguments."""
    return OutputOptions(path=args.output, score=not args.no_eval, stats_json=args.stats_json)
