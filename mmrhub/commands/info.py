"""``mmrhub info``: configs, features and row counts of a benchmark; writes dataset_infos.json."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.benchmarks import builder_module
from mmrhub.dataset_infos import write_dataset_infos


def register(subparsers):
    parser = subparsers.add_parser("info", help="show the configs, features and row counts of a benchmark")
    parser.add_argument("benchmark", nargs="?", choices=BENCHMARKS)
    parser.add_argument("--data-dir", help="the benchmark's data folder or URL (default: the bundled sample)")
    parser.add_argument(
        "--dataset-infos", metavar="PATH", help="write the dataset_infos.json of every builder's bundled sample"
    )
    parser.set_defaults(func=run, parser=parser)


def run(args) -> int:
    if args.dataset_infos:
        write_dataset_infos(args.dataset_infos)
        print(f"wrote {args.dataset_infos}")
        return 0
    if not args.benchmark:
        args.parser.error("name a benchmark (mipr or m2kr), or pass --dataset-infos PATH")
    print(describe(args.benchmark, args.data_dir))
    return 0


def describe(benchmark: str, data_dir=None) -> str:
    module = builder_module(benchmark)
    lines = [f"# {benchmark}: {data_dir or f'bundled sample {module.SAMPLE_DIR}'}", ""]
    for config in module.CONFIG_NAMES:
        dataset = module.load(config, data_dir=data_dir)
        lines.append(f"## {config} ({dataset.split}): {dataset.num_rows:,} rows")
        lines += [f"- {name}: {feature}" for name, feature in dataset.features.items()]
        lines.append("")
    return "\n".join(lines)
