"""Markdown as mmrhub writes it, in HTML: the tables and captions of ``mmrhub.scoring.output`` shown in the report.

Not a Markdown parser: exactly what those modules emit. Blocks are separated by blank lines. A block of lines that
start with ``|``, the second of them the alignment row (``|---|---:|``), is a table: its first row the heading, a
``\\|`` in a cell a ``|`` of the text, a right-aligned (``---:``) column numbers (class ``num``), and the first cell
of each row below the heading that row's heading. A block between ``_`` and ``_`` is an emphasised paragraph; any
other block a paragraph, its lines joined. Every text is escaped: nothing in a cell or a caption is taken for HTML.
"""

import re
from html import escape

_BLOCKS = re.compile(r"\n[ \t]*\n")
_SEPARATOR = re.compile(r"(?<!\\)\|")  # a cell's end: a | not written \|
_ALIGNMENT = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


def to_html(text: str, table_ids=()) -> str:
    """The HTML of ``text``, block by block; ``table_ids`` name its tables, in order (``id`` attributes)."""
    ids = iter(table_ids)
    html = []
    for block in _BLOCKS.split(text.strip("\n")):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if len(lines) > 1 and all(line.startswith("|") for line in lines) and _ALIGNMENT.match(lines[1]):
            html.append(table_html(lines, next(ids, None)))
        else:
            html.append(paragraph_html(" ".join(lines)))
    return "\n".join(html)


def cells(line: str) -> list:
    """The cells of a table row (``| a | b |``), stripped, each ``\\|`` read as ``|``."""
    return [part.strip().replace("\\|", "|") for part in _SEPARATOR.split(line.strip())[1:-1]]


def table_html(lines: list, table_id=None) -> str:
    """A Markdown table (heading, alignment row, rows) as an HTML table."""
    heading, alignment, *rows = (cells(line) for line in lines)
    numeric = [cell.endswith(":") for cell in alignment]
    head = "".join(f"<th>{escape(cell)}</th>" for cell in heading)
    body = ""
    for row in rows:
        first, *rest = row
        data = "".join(
            f'<td class="num">{escape(cell)}</td>'
            if index < len(numeric) and numeric[index]
            else f"<td>{escape(cell)}</td>"
            for index, cell in enumerate(rest, 1)
        )
        body += f"<tr><th>{escape(first)}</th>{data}</tr>"
    attribute = f' id="{escape(table_id)}"' if table_id else ""
    return f"<table{attribute}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def paragraph_html(text: str) -> str:
    """A paragraph, emphasised when it is written between ``_`` and ``_`` (as every caption is)."""
    if len(text) > 2 and text.startswith("_") and text.endswith("_"):
        return f"<p><em>{escape(text[1:-1])}</em></p>"
    return f"<p>{escape(text)}</p>"
