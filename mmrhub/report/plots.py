"""The report's figures, drawn with matplotlib and returned as inline SVG.

Text stays text in the SVG (``svg.fonttype: none``), so the browser draws the Chinese category names with its
own fonts: matplotlib's bundled DejaVu has no CJK glyphs, so each text names the CJK fonts after it (``fonts``).
Every text artist is made under ``STYLE``, whose ``text.parse_math: False`` draws names and categories as given:
"$5 and $6" is not mathtext, and "$\\x{y}$" is no parse error.
"""

import io
import warnings

import numpy as np

from mmrhub.report.fonts import CJK_FONTS
from mmrhub.report.selection import values

STYLE = {
    "svg.fonttype": "none",
    "font.sans-serif": ["DejaVu Sans", *CJK_FONTS],  # written into each SVG text's style, for the browser
    "svg.hashsalt": "mmrhub",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "text.parse_math": False,
    "text.usetex": False,
}
WIDTH = 7.5  # inches
RASTER_DPI = 144  # of a figure's rasterised layer: 1.5 image pixels a CSS pixel (96 an inch), the markers sharp enough


def _svg(figure) -> str:
    buffer = io.StringIO()
    with warnings.catch_warnings():
        # Missing CJK glyphs only affect matplotlib's measuring of the labels; the browser draws them.
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure.savefig(buffer, format="svg", bbox_inches="tight", dpi=RASTER_DPI)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or doctype


def _figure(width: float, height: float):
    """A Figure without pyplot: no backend or global state to manage."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    return figure, figure.subplots()


def group_bars(rows: list, key: str, measure: str) -> str:
    """Horizontal bars of ``measure`` per group (category or task), one bar per row (run or oracle)."""
    import matplotlib

    groups = list(rows[0].result[key])  # in natural order (group_means)
    with matplotlib.rc_context(STYLE):
        figure, axes = _figure(WIDTH, 0.9 + 0.22 * len(groups) * len(rows))
        height = 0.8 / len(rows)
        positions = np.arange(len(groups))
        for index, row in enumerate(rows):
            means = [row.result[key][group][measure] for group in groups]
            means = [np.nan if value is None else 100 * value for value in means]
            axes.barh(positions + index * height, means, height=height, label=row.name)
        counts = [rows[0].result[key][group]["num_queries"] for group in groups]
        axes.set_yticks(
            positions + height * (len(rows) - 1) / 2, [f"{group} ({count})" for group, count in zip(groups, counts)]
        )
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_xlabel(f"{measure} (x100)")
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, fontsize=8, frameon=False)
        return _svg(figure)


def distribution(rows: list, measure: str) -> str:
    """Histogram of the per-query values of ``measure``, one series per row."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        figure, axes = _figure(5.5, 3.2)
        series = [values(row.result["per_query"], measure) for row in rows]
        axes.hist([100 * s[~np.isnan(s)] for s in series], bins=np.linspace(0, 100, 11), label=[r.name for r in rows])
        axes.set_xlabel(f"{measure} (x100)")
        axes.set_ylabel("queries")
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, fontsize=8, frameon=False)
        return _svg(figure)


def paired(rows: list, measure: str) -> str:
    """Each query's ``measure`` for run A (x) against run B (y): above the diagonal B wins. The markers (one a query,
    3,522 on MIPR) are one rasterised image in the SVG; the axes, diagonal, legend and text stay vectors and text."""
    import matplotlib

    a, b = (values(row.result["per_query"], measure) for row in rows)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = 100 * a[keep], 100 * b[keep]
    with matplotlib.rc_context(STYLE):
        figure, axes = _figure(4.6, 4.2)
        for mask, colour, what in (
            (b > a, "#1a9850", f"{rows[1].name} better"),
            (b < a, "#d73027", f"{rows[0].name} better"),
            (b == a, "#969696", "tie"),
        ):
            axes.scatter(
                a[mask], b[mask], s=14, alpha=0.6, color=colour, label=f"{what}: {int(mask.sum())}", rasterized=True
            )
        axes.plot([0, 100], [0, 100], color="#636363", linewidth=0.8)
        axes.set_xlim(-3, 103), axes.set_ylim(-3, 103)
        axes.set_xlabel(f"{rows[0].name}: {measure} (x100)")
        axes.set_ylabel(f"{rows[1].name}: {measure} (x100)")
        axes.legend(loc="lower left", bbox_to_anchor=(0, 1.0), fontsize=8, frameon=False)
        return _svg(figure)
