"""Building blocks of the report tests: the bundled sample's runs, the report command through its own parser, the
parts of the page it writes, evaluate's table to compare with, and a count of the images decoded."""

import argparse
import json
from html.parser import HTMLParser

from _paths import M2KR_RUN  # noqa: F401 (for the tests)
from _paths import M2KR_SAMPLE
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED
from _paths import MIPR_SAMPLE

from mmrhub.cli import main
from mmrhub.commands import report

MIPR_DIR = MIPR_SAMPLE
M2KR_DIR = M2KR_SAMPLE
EMBEDDING = MIPR_EMBEDDING
RERANKER = MIPR_RERANKED


def run_report(*argv) -> int:
    """The report command through its own parser (the same arguments as ``mmrhub report``)."""
    parser = argparse.ArgumentParser()
    report.register(parser.add_subparsers())
    args = parser.parse_args(["report", *map(str, argv)])
    return args.func(args)


class Page(HTMLParser):
    """The parts of a report the tests read: tables by id, gallery rows, images (their sources looked up in the
    page's thumbnail table, as its script does), placeholders, item figures, the notice and the visible text."""

    def __init__(self, text: str):
        super().__init__()
        self.tables, self.queries, self.images, self.figures, self.placeholders = {}, [], [], [], []
        self.thumbnails, self.notice, self.text = "", "", ""
        self._table = self._cell = self._hidden = None
        self.feed(text)
        self.thumbnails = json.loads(self.thumbnails)
        for image in self.images:
            image["src"] = self.thumbnails[image["data-thumbnail"]]

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style", "svg"):
            self._hidden = attrs.get("id") or tag
        elif tag == "p" and attrs.get("id") == "missing-images":
            self._hidden = "notice"
        elif tag == "span" and attrs.get("class") == "placeholder":
            self.placeholders.append(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = ""
        elif tag == "div" and "query" in attrs.get("class", "").split():
            self.queries.append(attrs["data-query-id"])
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "figure" and "item" in attrs.get("class", "").split():
            self.figures.append(attrs["class"].split())

    def handle_endtag(self, tag):
        if tag in ("script", "style", "svg", "p"):
            self._hidden = None
        if tag in ("td", "th") and self._cell is not None:
            self._table[-1].append(self._cell.strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._hidden == "thumbnails":
            self.thumbnails += data
        elif self._hidden == "notice":
            self.notice += data
        elif self._hidden is None:
            self.text += data


def markdown_rows(text: str) -> list:
    """Every row of the first Markdown table, header included (the separator left out)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines if not line.startswith("|---")]


def evaluate_table(capsys, *argv) -> list:
    assert main(["evaluate", *map(str, argv)]) == 0
    return markdown_rows(capsys.readouterr().out)


def count_decodes(monkeypatch) -> list:
    """Every image ``shrink`` decodes, appended to the list returned."""
    from mmrhub.report import thumbnails

    decoded, real = [], thumbnails.shrink
    monkeypatch.setattr(thumbnails, "shrink", lambda data, size: decoded.append(len(data)) or real(data, size))
    return decoded
