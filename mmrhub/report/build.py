"""Put a report together: score the runs (exactly as ``mmrhub evaluate``), draw the plots, fill the gallery."""

import sys
from dataclasses import dataclass
from dataclasses import field

from mmrhub.report import plots
from mmrhub.report.gallery import build_gallery
from mmrhub.report.missing import missing_line
from mmrhub.report.page import Page
from mmrhub.report.page import render
from mmrhub.report.selection import pick_queries
from mmrhub.report.views import main_measure
from mmrhub.scoring.compare.comparison import compare_runs
from mmrhub.scoring.output.captions import page_captions
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import score_runs

PERMUTATIONS, SEED = 10000, 0  # mmrhub compare's defaults


@dataclass(frozen=True)
class ReportRequest:
    """A report: the runs scored as ``evaluate`` scores them, the gallery's queries and the builder's keywords."""

    scoring: ScoringRequest
    queries: int = 50  # gallery size, when ``query_ids`` is empty
    query_ids: tuple = ()  # these queries, in this order
    builder_options: dict = field(default_factory=dict)  # the builder's own keywords, for the thumbnails


def progress(message: str) -> None:
    """One line on stderr per step of a build, so a long one shows where it is."""
    print(f"mmrhub report: {message}", file=sys.stderr, flush=True)


def build_report(request: ReportRequest, truth) -> tuple:
    """(the HTML page, the scored rows, the line on the images not shown or '')."""
    scoring = request.scoring
    benchmark, data_dir, query_ids = scoring.benchmark, scoring.folder, request.query_ids or None
    view = benchmark.report
    progress(f"scoring {len(scoring.runs)} run(s)")
    rows = score_runs(scoring, truth)
    runs = [row for row in rows if row.run is not None]
    measure = main_measure(view, rows[0].result["per_query"])
    progress("drawing the plots")
    breakdown = benchmark.breakdown
    figures = [
        (
            f"{measure} per {breakdown.label.lower()} (queries in brackets)",
            plots.group_bars(rows, breakdown.key, measure),
        ),
        (f"Per-query {measure}", plots.distribution(rows, measure)),
    ]
    comparison = compare_runs(runs, PERMUTATIONS, SEED) if len(runs) > 1 else None
    if len(runs) == 2:
        figures.append(
            (f"{measure} per query, paired: above the diagonal {runs[1].name} wins", plots.paired(runs, measure))
        )
    shown = pick_queries([row.result["per_query"] for row in runs], measure, request.queries, query_ids)
    progress(f"gallery: reading the images of {len(shown)} queries")
    gallery, decoded = build_gallery(benchmark, view, data_dir, runs, measure, shown, request.builder_options)
    progress(
        f"gallery: {decoded.images} distinct images, {decoded.cached} from the thumbnail cache, "
        f"{len(decoded.failures)} not shown"
    )
    missing = missing_line(decoded.failures)
    how = (
        "the queries asked for"
        if query_ids
        else f"the {len(shown)} queries where the runs' {measure} differs most"
        if len(runs) > 1
        else f"the {len(shown)} queries with the lowest {measure}"
    )
    gallery_caption = (
        f"{how[0].upper()}{how[1:]}: each run's top {view.top_k} (rank, {view.judgment_word}, id and the start of the "
        "text under each thumbnail; hover for more)."
    )
    where = (
        f"bundled {benchmark.title} sample, not the benchmark: its numbers mean nothing" if scoring.sample else data_dir
    )
    page = Page(
        title=f"{benchmark.title} report: {', '.join(row.name for row in runs)}",
        caption=f"{len(truth.query_ids)} judged queries; data: {where}.",
        notes=page_captions(scoring, rows),
        rows=rows,
        figures=figures,
        comparison=comparison,
        gallery=gallery,
        view=view,
        measure=measure,
        gallery_caption=gallery_caption,
        missing=missing,
    )
    return render(page), rows, missing
