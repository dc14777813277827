"""``mmrhub report {mipr,m2kr} RUN [RUN ...] -o report.html``: one self-contained HTML page of scores, plots and a
gallery of queries with each run's top k as thumbnails. Needs the ``report`` extra (matplotlib)."""

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.building import add_build_arguments
from mmrhub.commands.building import build_options
from mmrhub.commands.evaluate import add_scoring_arguments
from mmrhub.commands.evaluate import json_payload
from mmrhub.commands.evaluate import load_truth
from mmrhub.commands.evaluate import print_notes
from mmrhub.commands.evaluate import scoring_options
from mmrhub.tables import write_json


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="one HTML page: scores, plots, a gallery of queries with thumbnails")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"report on {benchmark.title} runs")
        sub.add_argument("runs", nargs="+", metavar="RUN", help="run files; each gets a row and a line per query")
        sub.add_argument("-o", "--output", required=True, metavar="HTML", help="the page to write")
        sub.add_argument("--name", action="append", help="a run's name, once per run (default: the file's stem)")
        sub.add_argument("--oracle", metavar="BASELINE", help="add the Candidate-pool Oracle row of this run's pools")
        sub.add_argument("--rerank", metavar="BASELINE", help="check that every other run ranks exactly this run's pools")
        sub.add_argument("--queries", type=int, default=50, metavar="N",
                         help="gallery size: the N queries where the runs differ most, or a single run's N worst (default 50)")
        sub.add_argument("--query-ids", nargs="+", metavar="ID", help="show these queries instead, in this order")
        add_scoring_arguments(sub, benchmark)
        add_build_arguments(sub, images_dir=benchmark.images_dir_option)
        sub.set_defaults(func=run, breakdown=True)


def run(args) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError('mmrhub report needs matplotlib: pip install "mmrhub[report]"') from None
    from mmrhub.report.build import build_report
    from mmrhub.report.build import output_path

    if args.queries < 1:
        raise ValueError(f"--queries must be at least 1, got {args.queries}")
    output = output_path(args.output)
    truth = load_truth(args)
    measures, oracle = scoring_options(args)
    page, rows = build_report(
        args.benchmark, truth, args.data_dir or args.benchmark.sample_dir, args.data_dir is None, args.runs,
        names=args.name, oracle=args.oracle, rerank=args.rerank, options=measures, oracle_options=oracle,
        ignore_unknown_queries=args.ignore_unknown_queries, queries=args.queries, query_ids=args.query_ids,
        builder_options=build_options(args.benchmark, args),
    )
    print_notes(truth, rows)
    output.write_text(page, encoding="utf-8")
    print(f"wrote {output} ({output.stat().st_size / 1e6:.1f} MB)")
    if args.json:
        write_json(args.json, json_payload(args, truth, rows, {**measures, **oracle}))
    return 0
