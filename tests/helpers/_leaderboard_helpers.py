"""Building blocks of the leaderboard tests: boards built through the command on the bundled samples, runs derived
from the samples' own, and the tables ``mmrhub evaluate`` and ``mmrhub compare`` print, to hold a board to."""

import json
from html.parser import HTMLParser
from pathlib import Path

from _cli import md_tables
from _cli import run_cli
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED

SAMPLE_RUNS = {"mipr": [MIPR_EMBEDDING, MIPR_RERANKED], "m2kr": [M2KR_RUN]}


def swapped_run(source: Path, out: Path, every: int = 2, first: int = 0) -> Path:
    """A valid run of the same benchmark: ``source`` (official JSON) with the top two ids of every ``every``-th
    query from ``first`` on swapped, scores kept in order."""
    entries = json.loads(source.read_text(encoding="utf-8"))
    for entry in entries[first::every]:
        top, second = entry["ranked"][:2]
        top["did"], second["did"] = second["did"], top["did"]
    out.write_text(json.dumps(entries), encoding="utf-8")
    return out


def mipr_runs(folder: Path) -> list:
    """Four MIPR sample runs (the two bundled ones and two derived), named by their stems."""
    return [
        MIPR_EMBEDDING,
        MIPR_RERANKED,
        swapped_run(MIPR_EMBEDDING, folder / "swapped_embedding.json"),
        swapped_run(MIPR_RERANKED, folder / "swapped_reranker.json", every=3, first=1),
    ]


def build_board(capsys, out: Path, benchmark: str, runs, *options) -> Path:
    """``mmrhub leaderboard BENCHMARK RUN ... -o OUT`` on the bundled sample; the folder."""
    code, _, err = run_cli(capsys, "leaderboard", benchmark, *runs, "-o", out, *options)
    assert code == 0, err
    return out


def evaluate_cells(capsys, benchmark: str, runs, *options) -> dict:
    """{row name: its cells} of the table ``mmrhub evaluate`` prints for ``runs``."""
    code, out, err = run_cli(capsys, "evaluate", benchmark, *runs, *options)
    assert code == 0, err
    table = md_tables(out)[0]
    return {row[0]: row[1:] for row in table[1:]}


def compare_summary(capsys, benchmark: str, runs, *options) -> dict:
    """{row name: (label, cells with their letters)} of ``mmrhub compare``'s summary (three runs or more)."""
    code, out, err = run_cli(capsys, "compare", benchmark, *runs, *options)
    assert code == 0, err
    summary = md_tables(out)[0]
    rows = {}
    for row in summary[1:]:
        name, label = row[0].rsplit(" (", 1)
        rows[name] = (label.rstrip(")"), row[1:])
    return rows


def result_files(board: Path) -> dict:
    """{entry name: its result file's content}."""
    found = {}
    for path in sorted((board / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[data["name"]] = data
    return found


def free_port() -> int:
    """A TCP port nothing listens on now, on 127.0.0.1."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Cells(HTMLParser):
    """The rows of every <table> of an HTML text, as the cells' text (tags dropped, references decoded), and each
    row's class."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables, self.classes, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
            self.classes.append(dict(attrs).get("class"))
        elif tag in ("td", "th") and self.tables:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join(self._cell.split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
