"""Each measure is defined once (the metric module's DEFINITIONS); the metric card, the scoring page (docs/scoring.md)
and the exported dataset card show exactly those rows."""

import re

import pytest
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.export.card import measure_table


def measure_tables(text: str) -> list:
    """Every ``| Measure | Definition |`` table in a Markdown text, as lists of (name, definition) rows."""
    tables, lines = [], text.splitlines()
    for start, line in enumerate(lines):
        if line == "| Measure | Definition |":
            rows = []
            for row in lines[start + 2 :]:
                match = re.fullmatch(r"\| (.+?) \| (.+) \|", row)
                if not match:
                    break
                rows.append((match[1], match[2]))
            tables.append(rows)
    return tables


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_metric_card_shows_the_definitions(name):
    definitions = list(BENCHMARKS[name].measures.DEFINITIONS.items())
    card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    assert measure_tables(card) == [definitions]


def test_the_scoring_page_shows_both_benchmarks_definitions():
    page = (ROOT / "docs" / "scoring.md").read_text(encoding="utf-8")
    expected = [list(BENCHMARKS[name].measures.DEFINITIONS.items()) for name in ("mipr", "m2kr")]
    assert measure_tables(page) == expected


def test_measure_table_renders_every_row_once():
    definitions = BENCHMARKS["mipr"].measures.DEFINITIONS
    table = measure_table(definitions)
    assert measure_tables(table) == [list(definitions.items())]
    assert table.count("\n") == len(definitions) + 2


@pytest.mark.parametrize("name", list(BENCHMARKS))
@pytest.mark.parametrize("format", ["hf", "mteb"])
def test_exported_card_shows_the_definitions(exported, name, format):
    card = (exported(name, format) / "README.md").read_text(encoding="utf-8")
    assert measure_tables(card) == [list(BENCHMARKS[name].measures.DEFINITIONS.items())]
