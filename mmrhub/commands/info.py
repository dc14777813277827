"""``mmrhub info``: configs, features and row counts of a benchmark; writes dataset_infos.json."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_benchmark_argument
from mmrhub.commands.arguments import add_build_arguments
from mmrhub.commands.arguments import add_data_dir_argument
from mmrhub.commands.arguments import build_options
from mmrhub.declaration import Benchmark
from mmrhub.writing import check_target


def register(subparsers):
    """Add ``info``."""
    parser = subparsers.add_parser("info", help="show the configs, features and row counts of a benchmark")
    add_benchmark_argument(parser, nargs="?")
    add_data_dir_argument(parser, urls=True)
    add_build_arguments(parser)
    parser.add_argument(
        "--dataset-infos", metavar="PATH", help="write the dataset_infos.json of every builder's bundled sample"
    )
    parser.set_defaults(func=run, parser=parser)


def run(args) -> int:
    """Print a benchmark's configs, or write dataset_infos.json."""
    if args.dataset_infos:
        from mmrhub.export.dataset_infos import write_dataset_infos

        samples = [path for benchmark in BENCHMARKS.values() for path in benchmark.data_inputs(benchmark.sample_dir)]
        check_target(args.dataset_infos, "--dataset-infos", samples, example="dataset_infos.json")  # it reads them
        write_dataset_infos(args.dataset_infos, BENCHMARKS.values())
        print(f"wrote {args.dataset_infos}")
        return 0
    if args.benchmark is None:
        args.parser.error("name a benchmark (mipr or m2kr), or pass --dataset-infos PATH")
    benchmark = args.benchmark
    print(describe(benchmark, args.data_dir, **build_options(benchmark, args)))
    return 0


def describe(benchmark: Benchmark, data_dir=None, **options) -> str:
    """``options``: the builder's own keywords (``check_images``; M2KR's ``images_dir``)."""
    module = benchmark.builder()
    folder = benchmark.data_folder(data_dir)
    lines = [f"# {benchmark.name}: {folder if data_dir is not None else f'bundled sample {folder}'}", ""]
    for config in benchmark.configs:
        dataset = module.load(config, data_dir=folder, **options)
        lines.append(f"## {config} ({dataset.split}): {dataset.num_rows:,} rows")
        lines += [f"- {name}: {feature}" for name, feature in dataset.features.items()]
        lines.append("")
    return "\n".join(lines)
