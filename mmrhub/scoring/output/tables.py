"""Every table a command prints: scores (values x100, two decimals, as the published tables print them) in Markdown,
CSV, LaTeX or JSON; ``compare``'s table per pair; ``baseline --paper``'s rows beside the published ones."""

import csv
import io
import json

from mmrhub.declaration import Benchmark
from mmrhub.declaration import PublishedBaseline
from mmrhub.scoring.published_table import as_published
from mmrhub.scoring.published_table import published_target
from mmrhub.scoring.score import measure_names
from mmrhub.terminal import printable

UNDEFINED = "-"  # a mean over no query (e.g. SC-R-L1@10* without multi-category queries): not 0


FORMATS = ("markdown", "csv", "latex", "json")
_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
    "|": r"\textbar{}",  # OT1, LaTeX's default font encoding, prints these three as other glyphs
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def cell(value) -> str:
    """A value as the tables print it: x100 with two decimals, or ``-`` where undefined."""
    return UNDEFINED if value is None else f"{100 * value:.2f}"


def table(rows: list, label: str = "System", extra: tuple = (), format: str = "markdown") -> str:
    """rows: (name, result dict) pairs -> a table of their measures in ``format``; ``extra`` adds count columns."""
    names = measure_names(rows[0][1])
    header = [label, *names, *extra]
    body = [
        [printable(str(name)), *(cell(result[m]) for m in names), *(str(result[key]) for key in extra)]
        for name, result in rows
    ]
    return {"markdown": _markdown, "csv": _csv, "latex": _latex, "json": _json}[format](header, body)


def scores_table(rows: list, format: str = "markdown") -> str:
    """The table of scored rows (``mmrhub.scoring.score.Scored``): a row per run, then the oracle's."""
    return table([(row.name, row.result) for row in rows], format=format)


def per_query_table(per_query: dict, format: str = "markdown") -> str:
    """One row per query of a result's ``per_query`` values."""
    names = [name for name in per_query if name != "query_id"]
    rows = [(qid, {name: per_query[name][i] for name in names}) for i, qid in enumerate(per_query["query_id"])]
    return table(rows, label="Query", format=format)


def one_line(text: str) -> str:
    """A cell's text on one line: every control character escaped (``printable``), newlines and tabs too (a run's
    file name may hold a carriage return, a vertical tab or a line separator), so that no name splits a row of the
    text formats, whatever table it heads."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")


def markdown(rows: list) -> str:
    """Rows of cells (the heading first) as a Markdown table: the first column text, the others right-aligned
    numbers; a ``|`` in a cell is written ``\\|`` and a newline ``\\n``, so neither can end the cell or the row."""
    lines = [_markdown_row(rows[0]), "|---|" + "---:|" * (len(rows[0]) - 1)]
    return "\n".join(lines + [_markdown_row(row) for row in rows[1:]])


def _markdown_row(cells: list) -> str:
    return "| " + " | ".join(one_line(text).replace("|", "\\|") for text in cells) + " |"


def _markdown(header: list, body: list) -> str:
    return markdown([header, *body])


def _csv(header: list, body: list) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([list(map(one_line, cells)) for cells in [header, *body]])
    return out.getvalue().rstrip("\n")


def _latex(header: list, body: list) -> str:
    """A booktabs tabular: names escaped, numbers right-aligned."""

    def row(cells):
        return " & ".join("".join(_LATEX_SPECIAL.get(c, c) for c in one_line(text)) for text in cells) + r" \\"

    spec = "l" + "r" * (len(header) - 1)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", row(header), r"\midrule", *map(row, body)]
    return "\n".join(lines + [r"\bottomrule", r"\end{tabular}"])


def _json(header: list, body: list) -> str:
    """A list of rows, each {column: value}; numbers as numbers (x100), undefined as null."""

    def value(text):
        return None if text == UNDEFINED else float(text) if "." in text else int(text) if text.isdigit() else text

    rows = [
        {column: (text if i == 0 else value(text)) for i, (column, text) in enumerate(zip(header, row))} for row in body
    ]
    return json.dumps(rows, ensure_ascii=False, indent=1)


# ---------------------------------------------------------------------------------------------------------------
# mmrhub compare: a table per pair


def corrected_column(comparison):
    """The corrected p's column heading, or None when there is nothing to correct (one pair, or no correction)."""
    if len(comparison.pairs) < 2 or comparison.correction == "none":
        return None
    return f"p ({comparison.correction})"


def pair_rows(comparison, pair) -> list:
    """A pair's table as rows of cells, the heading first: measure, A, B, B - A (x100), p [, corrected p]."""
    corrected = corrected_column(comparison)
    rows = [["Measure", pair.a, pair.b, "B - A", "p"] + ([corrected] if corrected else [])]
    for test in pair.tests:
        cells = [test.measure, cell(test.a), cell(test.b), _signed(test.difference), _p(test.p)]
        rows.append(cells + ([_p(test.corrected)] if corrected else []))
    return rows


SUMMARY_ALPHA = 0.05  # the significance level of compare's summary markers


def run_labels(count: int) -> list:
    """The labels ``compare``'s summary gives ``count`` runs in order: a, b, c..., or 1, 2, 3... past 26 runs."""
    return [chr(ord("a") + i) if count <= 26 else str(i + 1) for i in range(count)]


def beaten_labels(comparison, names: list) -> dict:
    """{(run name, measure): the labels (``run_labels`` of ``names``, in that order) of the runs it is above with p <
    SUMMARY_ALPHA}: the corrected p where the pair tables give one, else the raw p."""
    labels = run_labels(len(names))
    label = dict(zip(names, labels))
    corrected = corrected_column(comparison) is not None
    above = {}
    for pair in comparison.pairs:
        for test in pair.tests:
            p = test.corrected if corrected else test.p
            if p is not None and p < SUMMARY_ALPHA and test.difference:
                winner, loser = (pair.b, pair.a) if test.difference > 0 else (pair.a, pair.b)
                above.setdefault((winner, test.measure), []).append(label[loser])
    return {key: sorted(beaten, key=labels.index) for key, beaten in above.items()}


def summary_rows(comparison, rows: list) -> list:
    """``compare``'s summary of three runs or more as rows of cells, the heading first: a row per run, labelled a,
    b, c... (``run_labels``), with its means x100 as ``evaluate`` prints them; after a value, the labels of the runs
    it is above (``beaten_labels``)."""
    names = [row.name for row in rows]
    labels, above = run_labels(len(rows)), beaten_labels(comparison, names)
    measures = measure_names(rows[0].result)
    lines = [["System", *measures]]
    for row, label in zip(rows, labels):
        cells = []
        for name in measures:
            beaten = above.get((row.name, name), [])
            cells.append(cell(row.result[name]) + (f" >{','.join(beaten)}" if beaten else ""))
        lines.append([f"{printable(row.name)} ({label})", *cells])
    return lines


def summary_table(comparison, rows: list) -> str:
    """``summary_rows`` as a Markdown table."""
    return markdown(summary_rows(comparison, rows))


def pair_tables(comparison) -> list:
    """``compare``'s tables, one Markdown table per pair."""
    return [markdown(pair_rows(comparison, pair)) for pair in comparison.pairs]


def _signed(value) -> str:
    return UNDEFINED if value is None else f"{100 * value:+.2f}"


def _p(value) -> str:
    return UNDEFINED if value is None else f"{value:.4f}"


# ---------------------------------------------------------------------------------------------------------------
# mmrhub baseline --paper: our rows beside the published ones


def beside_published(rows: list, benchmark: Benchmark) -> str:
    """Our rows and the published ones, and ours minus theirs, as one Markdown table (x100, two decimals), under
    the line naming the published table."""
    measures = list(benchmark.published_table[0])
    lines = [["System", *measures]]
    for row, published in zip(rows, benchmark.published_table):
        ours = [as_published(row.result[measure]) for measure in measures]
        lines.append([f"{printable(row.name)} (ours)", *(_number(value) for value in ours)])
        lines.append([f"{printable(row.name)} (paper)", *(f"{published[m]:.2f}" for m in measures)])
        deltas = [None if value is None else value - published[m] for value, m in zip(ours, measures)]
        lines.append(["difference", *(_number(delta, sign=True) for delta in deltas)])
    return f"Beside {published_target(benchmark).name}:\n{markdown(lines)}"


def beside_baseline(row, baseline: PublishedBaseline) -> str:
    """Our scored ``row`` and the source document's baseline row, and ours minus theirs (x100), under the line
    naming the document."""
    measures = [measure for measure, _ in baseline.row]
    theirs = dict(baseline.row)
    ours = [as_published(row.result[measure]) for measure in measures]
    deltas = [None if value is None else value - theirs[m] for value, m in zip(ours, measures)]
    lines = [
        ["System", *measures],
        [f"{printable(row.name)} (ours)", *(_number(value) for value in ours)],
        [f"{baseline.name} ({baseline.source})", *(f"{theirs[m]:.1f}" for m in measures)],
        ["difference", *(_number(delta, sign=True) for delta in deltas)],
    ]
    return f"Beside {baseline.source}'s row:\n{markdown(lines)}"


def _number(value, sign: bool = False) -> str:
    return UNDEFINED if value is None else (f"{value:+.2f}" if sign else f"{value:.2f}")
