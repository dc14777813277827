"""The scores table as Markdown, CSV, LaTeX or JSON: the same cells, each format parsed back."""

import csv
import io
import json

from mmrhub.cli import main
from mmrhub.scoring.output.tables import table

ROWS = [
    ("run_1 & 50% {x}", {"nDCG@10": 0.5, "R-L1@10": None, "num_queries": 3}),
    ("b", {"nDCG@10": 0.123456, "R-L1@10": 0.1, "num_queries": 3}),
]


def test_markdown_is_the_default():
    assert table(ROWS) == (
        "| System | nDCG@10 | R-L1@10 |\n|---|---:|---:|\n| run_1 & 50% {x} | 50.00 | - |\n| b | 12.35 | 10.00 |"
    )


def test_csv_parses_back_to_the_same_cells():
    rows = list(csv.reader(io.StringIO(table(ROWS, extra=("num_queries",), format="csv"))))
    assert rows == [
        ["System", "nDCG@10", "R-L1@10", "num_queries"],
        ["run_1 & 50% {x}", "50.00", "-", "3"],
        ["b", "12.35", "10.00", "3"],
    ]


def test_latex_escapes_names_and_uses_booktabs():
    lines = table(ROWS, format="latex").splitlines()
    assert (
        lines[0] == r"\begin{tabular}{lrr}"
        and lines[1] == r"\toprule"
        and lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
    )
    assert lines[4] == r"run\_1 \& 50\% \{x\} & 50.00 & - \\"


def test_json_holds_numbers_and_nulls():
    assert json.loads(table(ROWS, extra=("num_queries",), format="json")) == [
        {"System": "run_1 & 50% {x}", "nDCG@10": 50.0, "R-L1@10": None, "num_queries": 3},
        {"System": "b", "nDCG@10": 12.35, "R-L1@10": 10.0, "num_queries": 3},
    ]


def test_cli_csv_keeps_stdout_one_table_and_captions_on_stderr(capsys):
    assert main(["evaluate", "mipr", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][0] == "System" and [row[0] for row in rows[1:]] == [
        "simulated_embedding_top50",
        "simulated_reranker_top50",
        "Candidate-pool Oracle",
    ]
    assert rows[1][1] == "59.89"
    assert "note: Bundled MIPR sample (27 queries), not the benchmark" in err
