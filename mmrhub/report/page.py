"""The report as one HTML document: styles, figures and thumbnails inline, nothing fetched at view time."""

from html import escape

from mmrhub.scoring.comparison_output import footnote
from mmrhub.scoring.comparison_output import pair_rows
from mmrhub.scoring.tables import cell
from mmrhub.scoring.tables import measure_names

CSS = """
body { font-family: system-ui, "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.caption { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
.figures { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.figures svg { max-width: 100%; height: auto; }
.legend span { display: inline-block; margin-right: 1em; font-size: 0.85em; }
.legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: -0.1em; }
.query { border-top: 1px solid #ddd; padding: 0.6em 0; display: flex; gap: 1em; }
.query-head { width: 14em; flex: none; font-size: 0.9em; }
.query-head img { width: 96px; height: auto; display: block; margin-bottom: 0.3em; }
.run { display: flex; align-items: center; gap: 0.5em; margin-bottom: 0.4em; flex-wrap: wrap; }
.run-name { width: 9em; flex: none; font-size: 0.85em; overflow-wrap: anywhere; }
.item { margin: 0; text-align: center; font-size: 0.7em; width: 64px; }
.item img { width: 56px; height: 56px; object-fit: contain; border: 4px solid; background: #fff; }
.item.missed img { border-style: dashed; }
.sep { color: #999; font-size: 0.8em; margin: 0 0.3em; }
"""


def _cells(values, tag="td", numeric=False) -> str:
    attribute = ' class="num"' if numeric else ""
    return "".join(f"<{tag}{attribute}>{escape(str(value))}</{tag}>" for value in values)


def scores_table(rows: list) -> str:
    """The table ``mmrhub evaluate`` prints: a row per run (and the oracle), values x100, '-' where undefined."""
    names = measure_names(rows[0].result)
    body = "".join(
        f"<tr><th>{escape(row.name)}</th>{_cells([cell(row.result[name]) for name in names], numeric=True)}</tr>"
        for row in rows
    )
    return f'<table id="scores"><thead><tr>{_cells(["System", *names], "th")}</tr></thead><tbody>{body}</tbody></table>'


def significance_table(comparison) -> str:
    """``mmrhub compare``'s tables, one per pair (ids significance, significance-2, ...), and its footnote."""
    tables = ""
    for number, pair in enumerate(comparison.pairs, 1):
        head, *rows = pair_rows(comparison, pair)
        body = "".join(f"<tr><th>{escape(row[0])}</th>{_cells(row[1:], numeric=True)}</tr>" for row in rows)
        table_id = "significance" if number == 1 else f"significance-{number}"
        tables += f'<table id="{table_id}"><thead><tr>{_cells(head, "th")}</tr></thead><tbody>{body}</tbody></table>'
    return f'{tables}<p class="caption">{escape(footnote(comparison))} As mmrhub compare.</p>'


def _grade_classes(view) -> dict:
    return {grade.label: f"g{index}" for index, grade in enumerate(view.grades)}


def _legend(view) -> str:
    keys = "".join(f'<span><i style="background:{g.colour}"></i>{escape(g.label)}</span>' for g in view.grades)
    return f'<p class="legend">{keys}<span>dashed: {escape(view.relevant)} items the run missed</span></p>'


def _item(item, label: str, classes: dict, missed: bool = False) -> str:
    hover = f"{item.item_id} [{item.grade}] {item.text}"
    kind = "item missed" if missed else "item"
    return (f'<figure class="{kind} {classes[item.grade]}"><img src="{item.thumbnail}" alt="{escape(item.item_id)}" '
            f'title="{escape(hover)}"><figcaption>{escape(label)}</figcaption></figure>')


def _query(query, measure: str, classes: dict) -> str:
    runs = ""
    for run in query.runs:
        ranked = "".join(_item(item, f"{rank} {item.grade}", classes) for rank, item in enumerate(run.ranked, 1))
        missed = "".join(_item(item, f"missed {item.grade}", classes, True) for item in run.missed)
        more = run.missed_total - len(run.missed)
        missed += f'<span class="sep">+{more} more</span>' if more else ""
        separator = f'<span class="sep">missed {run.missed_total}:</span>' if run.missed_total else ""
        runs += (f'<div class="run"><div class="run-name">{escape(run.name)}<br>{escape(measure)} {cell(run.value)}'
                 f"</div>{ranked}{separator}{missed}</div>")
    head = (f'<div class="query-head"><img class="query-image" src="{query.thumbnail}" alt="query {escape(query.query_id)}">'
            f"<b>{escape(query.query_id)}</b> {escape(query.text) or '<i>(no question)</i>'}</div>")
    return f'<div class="query" data-query-id="{escape(query.query_id)}">{head}<div>{runs}</div></div>'


def render(title: str, caption: str, rows: list, figures: list, significance: str, gallery: list, view,
           measure: str, gallery_caption: str) -> str:
    """``figures``: (heading, inline SVG) pairs; ``significance``: the paired tests' tables, or '' for a single run."""
    classes = _grade_classes(view)
    grade_css = "".join(f".{classes[g.label]} img {{ border-color: {g.colour}; }}\n" for g in view.grades)
    plots = "".join(f"<figure><figcaption>{escape(heading)}</figcaption>{svg}</figure>" for heading, svg in figures)
    paired = f"<h2>Paired comparison</h2>{significance}" if significance else ""
    queries = "".join(_query(query, measure, classes) for query in gallery)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>{CSS}{grade_css}</style></head>
<body>
<h1>{escape(title)}</h1>
<p class="caption">{escape(caption)}</p>
<h2>Scores</h2>
{scores_table(rows)}
<p class="caption">Values x100; - where undefined.</p>
<h2>Plots</h2>
<div class="figures">{plots}</div>
{paired}
<h2>Gallery</h2>
<p class="caption">{escape(gallery_caption)}</p>
{_legend(view)}
<section id="gallery">{queries}</section>
</body></html>
"""
