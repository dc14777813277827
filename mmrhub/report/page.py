"""The report as one HTML document: styles, figures and thumbnails inline, nothing fetched at view time.

Each distinct thumbnail is written once, in a JSON block at the end; every ``<img>`` showing it names it
(``data-thumbnail``) and a few lines of script fill in the sources.
"""

import json
from dataclasses import dataclass
from html import escape
from typing import Optional

from mmrhub.declaration import View
from mmrhub.report.fonts import font_stack
from mmrhub.report.markdown import to_html
from mmrhub.scoring.compare.comparison import Comparison
from mmrhub.scoring.output.captions import footnote
from mmrhub.scoring.output.captions import summary_caption
from mmrhub.scoring.output.tables import cell
from mmrhub.scoring.output.tables import pair_tables
from mmrhub.scoring.output.tables import scores_table
from mmrhub.scoring.output.tables import summary_table

TEXT_CHARS = 90  # shown under a thumbnail: a title whole, a passage's start
HOVER_CHARS = 300  # passages run to thousands of characters; the title attribute shows the start

CSS = """
body { font-family: FONT_STACK; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.caption { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.figures svg { max-width: 100%; height: auto; }
.legend span { display: inline-block; margin-right: 1em; font-size: 0.85em; }
.legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: -0.1em; }
.query { border-top: 1px solid #ddd; padding: 0.6em 0; display: flex; gap: 1em; }
.query-head { width: 12em; flex: none; font-size: 0.9em; }
.query-head img { width: 96px; height: auto; display: block; margin-bottom: 0.3em; }
.runs { min-width: 0; overflow-x: auto; }  /* too narrow a window scrolls a query's runs, never wraps them */
.run { display: grid; grid-template-columns: auto max-content; gap: 0.4em 0.5em; align-items: start;
  margin-bottom: 0.4em; }
.run-name { width: 9em; font-size: 0.85em; overflow-wrap: anywhere; }
.ranked, .misses { display: flex; align-items: flex-start; gap: 0.35em; }
.misses { grid-column: 2; flex-wrap: wrap; }  /* under the top k, which stays one row */
.item { margin: 0; text-align: center; font-size: 0.7em; width: min-content; min-width: 72px; }
.item img, .item .placeholder { width: 56px; height: 56px; object-fit: contain; border: 4px solid; background: #fff; }
.item.missed img, .item.missed .placeholder { border-style: dashed; }
.placeholder { display: inline-block; box-sizing: content-box; overflow: hidden; color: #888; background: #f3f3f3;
  font-size: 0.85em; overflow-wrap: anywhere; }
.query-head .placeholder { display: block; width: 96px; height: 48px; margin-bottom: 0.3em; border: 1px dashed #bbb; }
.item .id { display: block; color: #666; white-space: nowrap; font-size: 0.8em; }  /* an id is never broken */
.item .text { display: block; text-align: left; overflow-wrap: anywhere; }
.notice { background: #fff4d6; padding: 0.3em 0.6em; }
.sep { color: #999; font-size: 0.8em; margin: 0 0.3em; }
""".replace("FONT_STACK", font_stack("system-ui"))  # Chinese text drawn wherever the page is opened (fonts.py)


@dataclass(frozen=True)
class Page:
    """What the report page shows, as ``mmrhub.report.build`` puts it together."""

    title: str
    caption: str  # under the title: the judged queries and the data
    notes: str  # Markdown captions under it (``page_captions``), or ''
    rows: list  # the scored rows (``mmrhub.scoring.score.Scored``): the scores table
    figures: list  # (heading, inline SVG) pairs
    comparison: Optional[Comparison]  # the paired tests of ``mmrhub compare``; None for a single run
    gallery: list  # ``mmrhub.report.gallery.Query``, in the order shown
    view: View
    measure: str  # the gallery's measure
    gallery_caption: str
    missing: str = ""  # the line on the images not shown, or ''


def scores_html(rows: list) -> str:
    """The table ``mmrhub evaluate`` prints: a row per run (and the oracle), values x100, '-' where undefined."""
    return to_html(scores_table(rows), table_ids=["scores"])


def significance_html(comparison: Comparison, runs: list) -> str:
    """``mmrhub compare``'s tables: for three runs or more its summary (id summary), then one per pair (ids
    significance, significance-2, ...), and its footnote."""
    summary = ""
    if len(runs) > 2:
        caption = escape(summary_caption(comparison).strip("_"))
        summary = f'{to_html(summary_table(comparison, runs), ["summary"])}<p class="caption">{caption}</p>'
    tables = pair_tables(comparison)
    ids = ["significance"] + [f"significance-{number}" for number in range(2, len(tables) + 1)]
    html = to_html("\n\n".join(tables), ids)
    return f'{summary}{html}<p class="caption">{escape(footnote(comparison))} As mmrhub compare.</p>'


def _grade_classes(view: View) -> dict:
    return {grade.label: f"g{index}" for index, grade in enumerate(view.grades)}


def _legend(view: View) -> str:
    keys = "".join(f'<span><i style="background:{g.colour}"></i>{escape(g.label)}</span>' for g in view.grades)
    return f'<p class="legend">{keys}<span>dashed: {escape(view.relevant)} items the run missed</span></p>'


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


class Thumbnails:
    """Each distinct data URI once: ``<img>`` tags name theirs, ``script`` holds them all."""

    def __init__(self):
        self.names = {}

    def image(self, uri, shown_id: str, attributes: str) -> str:
        """An ``<img>`` for a data URI, or the placeholder naming ``shown_id`` and why it has no image."""
        if not isinstance(uri, str):
            reason = f"{shown_id}: {uri.detail}"
            return f'<span class="placeholder" role="img" title="{escape(reason)}">no image: {escape(uri.kind)}</span>'
        name = self.names.setdefault(uri, f"t{len(self.names)}")
        return f'<img data-thumbnail="{name}" {attributes}>'

    def script(self) -> str:
        """The JSON block of every thumbnail and the script that fills in the sources."""
        table = json.dumps({name: uri for uri, name in self.names.items()})
        return (
            f'<script type="application/json" id="thumbnails">{table}</script>\n<script>\n'
            'const thumbnails = JSON.parse(document.getElementById("thumbnails").textContent);\n'
            'for (const img of document.querySelectorAll("img[data-thumbnail]")) '
            "img.src = thumbnails[img.dataset.thumbnail];\n</script>"
        )


def _item(item, label: str, classes: dict, thumbnails: Thumbnails, missed: bool = False) -> str:
    hover = f"{item.item_id} [{item.grade}] {clip(item.text, HOVER_CHARS)}"
    kind = "item missed" if missed else "item"
    image = thumbnails.image(item.thumbnail, item.item_id, f'alt="{escape(item.item_id)}" title="{escape(hover)}"')
    return (
        f'<figure class="{kind} {classes[item.grade]}">{image}<figcaption>{escape(label)}'
        f'<span class="id">{escape(item.item_id)}</span><span class="text">{escape(clip(item.text, TEXT_CHARS))}'
        "</span></figcaption></figure>"
    )


def _query(query, measure: str, classes: dict, thumbnails: Thumbnails) -> str:
    runs = ""
    for run in query.runs:
        ranked = "".join(
            _item(item, f"{rank} {item.grade}", classes, thumbnails) for rank, item in enumerate(run.ranked, 1)
        )
        missed = ""
        if run.missed_total:  # under the top k
            more = run.missed_total - len(run.missed)
            missed = "".join(_item(item, f"missed {item.grade}", classes, thumbnails, True) for item in run.missed)
            missed += f'<span class="sep">+{more} more</span>' if more else ""
            missed = f'<div class="misses"><span class="sep">missed {run.missed_total}:</span>{missed}</div>'
        runs += (
            f'<div class="run"><div class="run-name">{escape(run.name)}<br>{escape(measure)} {cell(run.value)}'
            f'</div><div class="ranked">{ranked}</div>{missed}</div>'
        )
    image = thumbnails.image(
        query.thumbnail, f"query {query.query_id}", f'class="query-image" alt="query {escape(query.query_id)}"'
    )
    head = (
        f'<div class="query-head">{image}'
        f"<b>{escape(query.query_id)}</b> {escape(query.text) or '<i>(no question)</i>'}</div>"
    )
    return f'<div class="query" data-query-id="{escape(query.query_id)}">{head}<div class="runs">{runs}</div></div>'


def render(page: Page) -> str:
    """The whole HTML document of ``page``."""
    view = page.view
    classes = _grade_classes(view)
    grade_css = "".join(f".{classes[g.label]} img {{ border-color: {g.colour}; }}\n" for g in view.grades)
    plots = "".join(
        f"<figure><figcaption>{escape(heading)}</figcaption>{svg}</figure>" for heading, svg in page.figures
    )
    runs = [row for row in page.rows if row.run is not None]  # the oracle's row is not compared
    paired = f"<h2>Paired comparison</h2>{significance_html(page.comparison, runs)}" if page.comparison else ""
    thumbnails = Thumbnails()
    queries = "".join(_query(query, page.measure, classes, thumbnails) for query in page.gallery)
    notice = f'<p class="notice" id="missing-images">{escape(page.missing)}</p>\n' if page.missing else ""
    notes = f'<div class="caption">{to_html(page.notes)}</div>\n' if page.notes.strip() else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(page.title)}</title>
<style>{CSS}{grade_css}</style></head>
<body>
<h1>{escape(page.title)}</h1>
<p class="caption">{escape(page.caption)}</p>
{notes}<h2>Scores</h2>
{scores_html(page.rows)}
<p class="caption">Values x100; - where undefined.</p>
<h2>Plots</h2>
<div class="figures">{plots}</div>
{paired}
<h2>Gallery</h2>
<p class="caption">{escape(page.gallery_caption)}</p>
{notice}{_legend(view)}
<section id="gallery">{queries}</section>
{thumbnails.script()}
</body></html>
"""
