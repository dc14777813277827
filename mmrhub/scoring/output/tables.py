"""Tables of scores (values x100, two decimals, as the published tables print them) in Markdown, CSV, LaTeX or JSON,
and the --json output."""

import csv
import io
import json

from mmrhub.terminal import printable
from mmrhub.writing import check_target
from mmrhub.writing import write_text

UNDEFINED = "-"  # a mean over no query (e.g. SC-R-L1@10* without multi-category queries): not 0


def measure_names(result: dict) -> list:
    """The measures of a result: float values, or None where undefined (counts are ints, groups are dicts)."""
    return [name for name, value in result.items() if value is None or isinstance(value, float)]


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


def per_query_table(per_query: dict, format: str = "markdown") -> str:
    """One row per query of a result's ``per_query`` values."""
    names = [name for name in per_query if name != "query_id"]
    rows = [(qid, {name: per_query[name][i] for name in names}) for i, qid in enumerate(per_query["query_id"])]
    return table(rows, label="Query", format=format)


def one_line(text: str) -> str:
    """A cell's text on one line: the newlines and tabs that ``printable`` keeps (a run's file name may hold them)
    shown as ``\\n`` and ``\\t``, so that no name splits a row of the text formats."""
    return text.replace("\n", "\\n").replace("\t", "\\t")


def _markdown(header: list, body: list) -> str:
    def row(cells):
        return "| " + " | ".join(one_line(text).replace("|", "\\|") for text in cells) + " |"

    return "\n".join([row(header), "|---|" + "---:|" * (len(header) - 1), *map(row, body)])


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


def check_json_target(path, inputs=()) -> None:
    """The ``--json`` target, checked before any work (None: no ``--json``); see ``mmrhub.writing.check_target``."""
    if path is not None:
        check_target(path, "--json", inputs, example="scores.json")


def write_json(path, payload: dict) -> None:
    """The ``--json`` file: every value, indented, written atomically."""
    write_text(path, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
