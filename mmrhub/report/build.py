"""Put a report together: score the runs (exactly as ``mmrhub evaluate``), draw the plots, fill the gallery."""

from pathlib import Path

from mmrhub.commands.compare import compare
from mmrhub.report import plots
from mmrhub.report.gallery import build_gallery
from mmrhub.report.page import render
from mmrhub.report.page import significance_table
from mmrhub.report.selection import pick_queries
from mmrhub.report.views import main_measure
from mmrhub.scoring import score_runs

PERMUTATIONS, SEED = 10000, 0  # mmrhub compare's defaults


def build_report(benchmark, truth, data_dir, sample: bool, paths: list, names=None, oracle=None, rerank=None,
                 options=None, oracle_options=None, ignore_unknown_queries=False, queries: int = 50,
                 query_ids=None, builder_options=None) -> tuple:
    """(the HTML page, the scored rows); ``builder_options``: the builder's own keywords, for the thumbnails."""
    view = benchmark.report
    rows = score_runs(benchmark, truth, paths, names=names, oracle=oracle, rerank=rerank, options=options,
                      oracle_options=oracle_options, breakdown=True, ignore_unknown_queries=ignore_unknown_queries)
    runs = [row for row in rows if row.run is not None]
    measure = main_measure(view, rows[0].result["per_query"])
    breakdown = benchmark.breakdown
    figures = [
        (f"{measure} per {breakdown.label.lower()} (queries in brackets)", plots.group_bars(rows, breakdown.key, measure)),
        (f"Per-query {measure}", plots.distribution(rows, measure)),
    ]
    significance = ""
    if len(runs) == 2:
        figures.append((f"{measure} per query, paired: above the diagonal {runs[1].name} wins", plots.paired(runs, measure)))
        significance = significance_table((runs[0].name, runs[1].name), compare(runs, PERMUTATIONS, SEED), PERMUTATIONS, SEED)
    shown = pick_queries([row.result["per_query"] for row in runs], measure, queries, query_ids)
    gallery = build_gallery(benchmark, view, str(data_dir), runs, measure, shown, builder_options)
    how = ("the queries asked for" if query_ids else
           f"the {len(shown)} queries where the runs' {measure} differs most" if len(runs) > 1 else
           f"the {len(shown)} queries with the lowest {measure}")
    gallery_caption = (f"{how[0].upper()}{how[1:]}: each run's top {view.top_k} (rank and grade under each thumbnail; "
                       "hover for the id, grade and text).")
    where = f"bundled {benchmark.title} sample, not the benchmark: its numbers mean nothing" if sample else str(data_dir)
    caption = f"{len(truth.query_ids)} judged queries; data: {where}."
    page = render(f"{benchmark.title} report: {', '.join(row.name for row in runs)}", caption, rows, figures,
                  significance, gallery, view, measure, gallery_caption)
    return page, rows


def output_path(path) -> Path:
    """The page's path, checked before any work: a folder in the way or a missing folder is a one-line error."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"-o {path}: is a folder; give a file name, e.g. {path / 'report.html'}.")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"-o {path}: folder {path.parent} does not exist; create it first.")
    return path
