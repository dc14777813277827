"""What the board's page shows, as HTML: the board (sortable on every column, ``compare``'s letters after each value,
the published rows marked as such, each row's record), a view per group (MIPR's categories, M2KR's tasks), what
every column means (the metric modules' DEFINITIONS and ``compare``'s footnote), the judgments, and the lines
said about an upload.

Every text that comes from data (a name, an id in a message, a record's field) goes through ``escape``: nothing
uploaded becomes markup, and nothing becomes a template either (gradio's HTML component fills its template as a
JavaScript template string, so ``$``, braces and backquotes are written as character references too)."""

import html
import re
import shlex

from mmrhub.declaration import Benchmark
from mmrhub.leaderboard.board import Board
from mmrhub.leaderboard.standings import Standings
from mmrhub.leaderboard.standings import main_measure
from mmrhub.leaderboard.standings import published_rows
from mmrhub.scoring.output.captions import footnote
from mmrhub.scoring.output.captions import summary_caption
from mmrhub.scoring.output.tables import cell
from mmrhub.terminal import printable

_TEMPLATE_CHARACTERS = {"$": "&#36;", "{": "&#123;", "}": "&#125;", "`": "&#96;"}
PUBLISHED = "as published, not recomputed"
UPLOAD_CLASS = "upload"

# Sorting on a column heading's click (gradio runs it once, with ``element`` the component's root): numbers by value,
# names as text, an undefined value last whichever way; a second click reverses.
SORT_SCRIPT = """
element.addEventListener('click', (event) => {
  const heading = event.target.closest('th[data-column]');
  if (!heading || !element.contains(heading)) return;
  const table = heading.closest('table');
  const body = table.tBodies[0];
  const column = Number(heading.dataset.column);
  const descending = heading.getAttribute('aria-sort') !== 'descending';
  const text = heading.dataset.kind === 'text';
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = a.cells[column].dataset.value, y = b.cells[column].dataset.value;
    if (x === '' || y === '') return (x === '') - (y === '');
    const order = text ? x.localeCompare(y) : Number(x) - Number(y);
    return descending ? -order : order;
  });
  for (const row of rows) body.appendChild(row);
  for (const other of table.querySelectorAll('th[data-column]')) other.removeAttribute('aria-sort');
  heading.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
});
"""

STYLE = """
.mmrhub-board table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.mmrhub-board th, .mmrhub-board td { padding: 0.25em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }
.mmrhub-board th[data-column] { cursor: pointer; white-space: nowrap; }
.mmrhub-board th[aria-sort=descending]::after { content: " ▼"; }
.mmrhub-board th[aria-sort=ascending]::after { content: " ▲"; }
.mmrhub-board td.number { text-align: right; white-space: nowrap; }
.mmrhub-board .letters { color: #555; font-size: 0.85em; margin-left: 0.25em; }
.mmrhub-board tr.published td { font-style: italic; color: #555; }
.mmrhub-board tr.upload td { background: #fff7d6; }
.mmrhub-board .rerun { color: #1a7f37; font-size: 0.85em; }
.mmrhub-board .problem { color: #b42318; }
"""


def escape(text) -> str:
    """``text`` as HTML text or attribute: markup and template characters written as character references, control
    characters as escapes (``printable``)."""
    escaped = html.escape(printable(str(text)), quote=True)
    return "".join(_TEMPLATE_CHARACTERS.get(character, character) for character in escaped)


def _value(value) -> str:
    """A cell's sort key: x100 (what the cell shows), '' where undefined."""
    return "" if value is None else f"{100 * value:.10f}"


def board_table(standings: Standings, benchmark: Benchmark, upload: str = "") -> str:
    """The board: a row per entry (label, name, each measure x100 with the labels it is above, the run and its
    record), then the published rows; ``upload``: the name of the row to mark as the run just uploaded."""
    measures = standings.measures or _published_measures(benchmark)
    headings = ['<th data-column="0" data-kind="text">Label</th>', '<th data-column="1" data-kind="text">System</th>']
    headings += [f'<th data-column="{2 + i}">{escape(name)}</th>' for i, name in enumerate(measures)]
    headings.append("<th>Run and record</th>")
    rows = []
    for entry, label in zip(standings.entries, standings.labels):
        cells = [_text_cell(label), _text_cell(entry.name)]
        for measure in measures:
            value = entry.result.get(measure)
            beaten = standings.letters.get((entry.name, measure), [])
            letters = f'<span class="letters">&gt;{escape(",".join(beaten))}</span>' if beaten else ""
            cells.append(f'<td class="number" data-value="{_value(value)}">{escape(cell(value))}{letters}</td>')
        cells.append(f"<td>{run_summary(entry)}</td>")
        kind = f' class="{UPLOAD_CLASS}"' if upload and entry.name == upload else ""
        rows.append(f'<tr{kind} data-label="{escape(label)}">{"".join(cells)}</tr>')
    rows += [_published_row(name, source, values, digits, measures) for name, source, values, digits in
             published_rows(benchmark)]  # fmt: skip
    return (
        '<div class="mmrhub-board"><table class="board"><thead><tr>'
        + "".join(headings)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _published_measures(benchmark: Benchmark) -> list:
    return list(dict.fromkeys(measure for _, _, values, _ in published_rows(benchmark) for measure in values))


def _published_row(name: str, source: str, values: dict, decimals: int, measures: list) -> str:
    cells = ['<td data-value=""></td>', _text_cell(name, f"{name} ({source}, {PUBLISHED})")]
    for measure in measures:
        value = values.get(measure)
        shown = "" if value is None else f"{value:.{decimals}f}"
        key = "" if value is None else f"{value:.10f}"
        cells.append(f'<td class="number" data-value="{key}">{shown}</td>')
    cells.append(f"<td>{escape(source)}: {PUBLISHED}</td>")
    return f'<tr class="published">{"".join(cells)}</tr>'


def _text_cell(value: str, shown: str = None) -> str:
    return f'<td data-value="{escape(value)}">{escape(value if shown is None else shown)}</td>'


def run_summary(entry) -> str:
    """The run file (name, format, sha256) and what its record says, or that there is none."""
    run = entry.run
    digest = run.get("sha256")
    lines = [f"{escape(run.get('file', ''))} ({escape(run.get('format', ''))})"]
    if digest:
        lines.append(f'<span title="sha256 {escape(digest)}">sha256 {escape(digest[:12])}…</span>')
    record = entry.record
    if not record:
        return " ".join(lines) + "<br>no record"
    said = record_lines(record)
    heading = " · ".join(escape(record[key]) for key in ("model", "preset", "dtype") if record.get(key))
    rerun = '<br><span class="rerun">remade by <code>mmrhub rerun</code></span>' if record.get("rerun") else ""
    details = "".join(f"<dt>{escape(key)}</dt><dd>{value}</dd>" for key, value in said)
    return f"{' '.join(lines)}<details><summary>{heading or 'record'}</summary><dl>{details}</dl></details>{rerun}"


RECORD_FIELDS = (
    ("command", "made by"),
    ("model", "model"),
    ("revision", "revision"),
    ("commit", "model commit"),
    ("files_sha256", "checkpoint files (sha256)"),
    ("preset", "preset"),
    ("dtype", "dtype"),
    ("device", "device"),
    ("mteb", "mteb"),
    ("mmrhub_commit", "mmrhub commit"),
    ("command_line", "command"),
    ("record_sha256", "record (sha256)"),
)


def record_lines(record: dict) -> list:
    """(label, escaped HTML) of each field a record summary holds, in RECORD_FIELDS' order, then the versions."""
    lines = [(label, escape(record[key])) for key, label in RECORD_FIELDS if record.get(key)]
    if record.get("random_weights"):
        lines.append(("weights", "random: the model's scores mean nothing"))
    versions = record.get("versions") or {}
    if versions:
        shown = ", ".join(f"{escape(name)} {escape(version or '-')}" for name, version in versions.items())
        lines.append(("versions", shown))
    return lines


def groups_table(standings: Standings, benchmark: Benchmark, group: str, upload: str = "") -> str:
    """Every entry's means over the queries of ``group`` (a category or task), x100, and how many queries it holds."""
    key = benchmark.breakdown.key
    measures = standings.measures
    headings = ['<th data-column="0" data-kind="text">Label</th>', '<th data-column="1" data-kind="text">System</th>']
    headings += [f'<th data-column="{2 + i}">{escape(name)}</th>' for i, name in enumerate(measures)]
    headings.append(f'<th data-column="{2 + len(measures)}">queries</th>')
    rows = []
    for entry, label in zip(standings.entries, standings.labels):
        means = entry.result[key].get(group, {})
        cells = [_text_cell(label), _text_cell(entry.name)]
        for measure in measures:
            value = means.get(measure)
            cells.append(f'<td class="number" data-value="{_value(value)}">{escape(cell(value))}</td>')
        count = means.get("num_queries", 0)
        cells.append(f'<td class="number" data-value="{count}">{count}</td>')
        kind = f' class="{UPLOAD_CLASS}"' if upload and entry.name == upload else ""
        rows.append(f"<tr{kind}>{''.join(cells)}</tr>")
    return (
        f'<div class="mmrhub-board"><p>{escape(benchmark.breakdown.label)}: <strong>{escape(group)}</strong></p>'
        f'<table class="groups"><thead><tr>{"".join(headings)}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


def groups_of(standings: Standings, benchmark: Benchmark) -> list:
    """The groups (categories, tasks) the entries are broken down by, in their natural order."""
    if not standings.entries:
        return []
    return list(standings.entries[0].result[benchmark.breakdown.key])


def definitions(benchmark: Benchmark, standings: Standings, board: Board) -> str:
    """What every column means: each measure's definition (its metric module's DEFINITIONS, as the metric card shows
    them), what a label and the letters after a value are (``compare``'s footnote), the published rows, the record."""
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{_markdown_text(text)}</td></tr>"
        for name, text in benchmark.measures.DEFINITIONS.items()
    )
    main = main_measure(benchmark, standings.measures) or ""
    lines = [
        f"Values are means over the judged queries, x100, as <code>mmrhub evaluate</code> prints them; rows are "
        f"ranked by {escape(main)}, and every column sorts on a click of its heading.",
    ]
    if standings.comparison is not None:
        letters = summary_caption(standings.comparison).strip("_")
        lines.append(
            f"Label: the row's letter in <code>mmrhub compare</code> of the board's runs in this order. "
            f"{escape(letters)} {escape(footnote(standings.comparison))}"
        )
    lines.append(
        f"Rows {PUBLISHED}: the source documents' own numbers (no per-query values, so no letters), shown beside "
        "the entries for reference."
    )
    lines.append(
        "Run and record: the run file scored, its sha256, and what the record written beside it (RUN.json.meta.json) "
        "says; <em>remade by <code>mmrhub rerun</code></em> where that record lets <code>mmrhub rerun</code> make "
        "the run again."
    )
    return (
        '<div class="mmrhub-board"><table class="definitions"><thead><tr><th>Measure</th><th>Definition</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>" + "".join(f"<p>{line}</p>" for line in lines) + "</div>"
    )


def _markdown_text(text: str) -> str:
    """A definition as the metric card's Markdown table shows it: ``\\|`` as ``|``, `code` spans as <code>."""
    parts = re.split(r"`([^`]*)`", text.replace("\\|", "|"))
    return "".join(f"<code>{escape(part)}</code>" if i % 2 else escape(part) for i, part in enumerate(parts))


def header(benchmark: Benchmark, board: Board, entries: int, problems: list) -> str:
    """The title, the sample warning, the judgments (source and version) and the result files left out."""
    judgments = board.judgments
    files = ", ".join(
        f'{escape(name)} (<span title="sha256 {escape(digest)}">sha256 {escape(digest[:12])}…</span>)'
        for name, digest in judgments["files"].items()
    )
    lines = [
        f"<h1>{escape(benchmark.title)} leaderboard</h1>",
        f"<p>{entries} entries, scored by mmrhub {escape(board.mmrhub)} against the judgments of "
        f"{escape(judgments.get('source', ''))}: {files}; {escape(judgments.get('queries', ''))} judged queries.</p>",
    ]
    if board.sample:
        lines.append(
            f'<p class="problem"><strong>Bundled {escape(benchmark.title)} sample, not the benchmark: its numbers '
            "mean nothing.</strong></p>"
        )
    lines += [f'<p class="problem">{escape(problem)} (left out)</p>' for problem in problems]
    return '<div class="mmrhub-board">' + "".join(lines) + "</div>"


def said(lines: list, error: bool = False) -> str:
    """Lines said about an upload (an error's problems, one a line; notes), each escaped."""
    kind = ' class="problem"' if error else ""
    shown = [line for text in lines for line in str(text).splitlines() if line.strip()]
    return '<div class="mmrhub-board">' + "".join(f"<p{kind}>{escape(line)}</p>" for line in shown) + "</div>"


def add_command(space_id: str, run_file: str, name: str) -> str:
    """The commands that add a run to the board without the page: in a clone of the Space, ``leaderboard add`` then
    ``push``."""
    folder = space_id.split("/")[-1] if space_id else "BOARD"
    clone = f"git clone https://huggingface.co/spaces/{space_id}\n" if space_id else ""
    commands = (
        f"{clone}mmrhub leaderboard add {shlex.quote(folder)} {shlex.quote(run_file)} --name {shlex.quote(name)}\n"
        f"mmrhub push {shlex.quote(folder)} {shlex.quote(space_id or 'ORG/NAME')}"
    )
    return f'<div class="mmrhub-board"><pre><code>{escape(commands)}</code></pre></div>'
