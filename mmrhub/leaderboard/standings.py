"""The board's rows in order, each with ``compare``'s label (a, b, c...) and, per measure, the labels of the rows it is
above after the board's correction: ``mmrhub compare`` of the same runs in the same order prints the same letters
(the same test, sign flips, seed and correction, from the same per-query values)."""

from dataclasses import dataclass
from typing import Optional

from mmrhub.declaration import Benchmark
from mmrhub.leaderboard.board import Board
from mmrhub.scoring.compare.comparison import Comparison
from mmrhub.scoring.compare.comparison import compare_runs
from mmrhub.scoring.oracle import ORACLE_NAME
from mmrhub.scoring.output.tables import beaten_labels
from mmrhub.scoring.output.tables import cell
from mmrhub.scoring.output.tables import measure_names
from mmrhub.scoring.output.tables import run_labels
from mmrhub.scoring.published_table import published_target


@dataclass(frozen=True)
class Standings:
    """Rows (``results.Entry``) in label order, their labels, the comparison (None with fewer than two rows) and
    {(row name, measure): labels of the rows it is above}."""

    entries: tuple
    labels: tuple
    comparison: Optional[Comparison]
    letters: dict

    @property
    def measures(self) -> list:
        """The board's columns: the measures every row has."""
        return measure_names(self.entries[0].result) if self.entries else []

    def label(self, name: str) -> str:
        """The label of the row ``name``."""
        return self.labels[[entry.name for entry in self.entries].index(name)]


def main_measure(benchmark: Benchmark, measures: list) -> Optional[str]:
    """The measure a board is ranked by: the report's (nDCG@10, Recall@5), or the first one where the board's
    cutoffs leave it out."""
    if benchmark.report.main_measure in measures:
        return benchmark.report.main_measure
    return measures[0] if measures else None


def ranked(entries: list, benchmark: Benchmark) -> list:
    """Entries best first on the main measure (an undefined value last), then by name."""
    if not entries:
        return []
    main = main_measure(benchmark, measure_names(entries[0].result))

    def key(entry):
        value = entry.result.get(main)
        return (value is None, -(value or 0.0), entry.name)

    return sorted(entries, key=key)


def standings_of(entries: list, board: Board, earlier: Optional[Comparison] = None) -> Standings:
    """The standings of ``entries`` in the order given: every pair compared as ``mmrhub compare`` compares them
    (``earlier``: a comparison of some of them, whose pairs are not tested again)."""
    comparison = None
    if len(entries) > 1:
        comparison = compare_runs(entries, board.permutations, board.seed, board.correction, earlier=earlier)
    names = [entry.name for entry in entries]
    letters = beaten_labels(comparison, names) if comparison is not None else {}
    return Standings(tuple(entries), tuple(run_labels(len(entries))), comparison, letters)


def payload(standings: Standings, benchmark: Benchmark, only: Optional[str] = None) -> dict:
    """The board as JSON (the page's API): each row's label, name, scores as ``evaluate`` prints them (x100, two
    decimals), the labels it is above per measure, its run and record; then the published rows. ``only``: that row
    alone."""
    rows = []
    for entry, label in zip(standings.entries, standings.labels):
        if only is not None and entry.name != only:
            continue
        rows.append(
            {
                "label": label,
                "name": entry.name,
                "scores": {measure: cell(entry.result[measure]) for measure in standings.measures},
                "letters": {
                    measure: standings.letters.get((entry.name, measure), []) for measure in standings.measures
                },
                "run": entry.run,
                "record": entry.record,
            }
        )
    if only is not None:
        return rows[0]
    published = [
        {"name": name, "source": source, "scores": values} for name, source, values, _ in published_rows(benchmark)
    ]
    return {"benchmark": benchmark.name, "measures": standings.measures, "rows": rows, "published": published}


def published_rows(benchmark: Benchmark) -> list:
    """(name, source, {measure: value x100}, decimals printed) of the source documents' rows, as published, not
    recomputed: the MIPR paper's table (its runs and the Candidate-pool Oracle), the M2KR card's baseline row."""
    rows = []
    if benchmark.published_table:
        names = [run.name for run in benchmark.bundled_runs] + [ORACLE_NAME]
        source = published_target(benchmark).name
        rows += [(name, source, dict(values), 2) for name, values in zip(names, benchmark.published_table)]
    baseline = benchmark.published_baseline
    if baseline is not None:
        rows.append((baseline.name, baseline.source, dict(baseline.row), 1))
    return rows
