"""``mmrhub report {mipr,m2kr} RUN [RUN ...] -o report.html``: one self-contained HTML page of scores, plots and a
gallery of queries with each run's top k as thumbnails. Needs the ``report`` extra (matplotlib)."""

import sys

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.commands.arguments import add_build_arguments
from mmrhub.commands.arguments import add_query_ids_argument
from mmrhub.commands.arguments import add_scoring_arguments
from mmrhub.commands.arguments import build_options
from mmrhub.commands.arguments import scoring_request
from mmrhub.commands.converters import whole_number
from mmrhub.commands.messages import as_given
from mmrhub.scoring.output.captions import print_notes
from mmrhub.scoring.output.captions import table_captions
from mmrhub.scoring.output.payloads import check_json_target
from mmrhub.scoring.output.payloads import scores_payload
from mmrhub.scoring.output.payloads import write_json
from mmrhub.scoring.output.tables import scores_table
from mmrhub.scoring.score import load_truth
from mmrhub.terminal import printable
from mmrhub.writing import check_target
from mmrhub.writing import local_paths
from mmrhub.writing import write_text

REPORT_EXTRA = 'pip install ".[report]"'  # as the README's install lines give it (a test holds them equal)


def extra_requirements(extra: str) -> str:
    """The pip command installing an extra's requirements by name, as the installed package declares them."""
    from importlib import metadata

    marker = f'extra == "{extra}"'
    needs = [req.split(";")[0].strip() for req in metadata.requires("mmrhub") or () if marker in req]
    return "pip install " + " ".join(f'"{need}"' for need in needs)


def register(subparsers) -> None:
    """Add ``report`` and its per-benchmark subcommands."""
    parser = subparsers.add_parser("report", help="one HTML page: scores, plots, a gallery of queries with thumbnails")
    benchmarks = parser.add_subparsers(dest="benchmark_name", required=True, metavar="{mipr,m2kr}")
    for benchmark in BENCHMARKS.values():
        sub = benchmarks.add_parser(benchmark.name, help=f"report on {benchmark.title} runs")
        sub.add_argument("runs", nargs="+", metavar="RUN", help="run files; each gets a row and a line per query")
        sub.add_argument("-o", "--output", required=True, metavar="HTML", help="the page to write")
        sub.add_argument("--name", action="append", help="a run's name, once per run (default: the file's stem)")
        sub.add_argument("--oracle", metavar="BASELINE", help="add the Candidate-pool Oracle row of this run's pools")
        sub.add_argument(
            "--rerank", metavar="BASELINE", help="check that every other run ranks exactly this run's pools"
        )
        sub.add_argument(
            "--queries",
            type=whole_number(1, 1000),
            default=50,
            metavar="N",
            help="gallery size: the N queries where the runs differ most, or a single run's N worst (default 50)",
        )
        add_query_ids_argument(sub, "show these queries instead")
        add_scoring_arguments(sub, benchmark)
        add_build_arguments(sub, images_dir=benchmark.images_dir_option)
        sub.set_defaults(func=run, breakdown=True)


def run(args) -> int:
    """Score the runs, build the page and write it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError(
            f"matplotlib is not installed; the report extra brings it: {REPORT_EXTRA} in the repository's root, or "
            f"{extra_requirements('report')} where mmrhub was installed from a wheel."
        ) from None
    from mmrhub.report.build import ReportRequest
    from mmrhub.report.build import build_report

    request = ReportRequest(
        scoring=scoring_request(args, runs=args.runs),
        queries=args.queries,
        query_ids=tuple(args.query_ids or ()),
        builder_options=build_options(args.benchmark, args),
    )
    inputs = [*request.scoring.inputs, *local_paths([getattr(args, "images_dir", None)])]
    output = check_target(args.output, "-o", inputs, example="report.html")
    check_json_target(args.json, inputs)
    truth = load_truth(request.scoring)
    page, rows, missing = build_report(request, truth)
    print_notes(truth, rows)
    if missing:
        print(printable(as_given(f"note: {missing}", args)), file=sys.stderr)
    print(scores_table(rows) + table_captions(request.scoring, truth, rows))
    write_text(output, page)
    print(f"wrote {output} ({output.stat().st_size / 1e6:.1f} MB)")
    if args.json:
        write_json(args.json, scores_payload(request.scoring, truth, rows))
    return 0
