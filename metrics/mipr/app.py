"""The metric's Hub Space: a table of queries in (each cell a list of ids, grades or categories), the scores out.

The page is built with gradio itself (`python app.py` starts it; the card's `sdk_version` names the gradio it is
tested with). A Space runs this file from a folder named `app`, where `evaluate.load(<folder>)` would take this
very file for the metric script, so the metric is loaded by its own file name.
"""

import importlib
import sys
from pathlib import Path

import evaluate
import gradio as gr

METRIC_FILE = Path(__file__).resolve().parent / "mipr.py"
COLUMNS = ["predictions", "references", "grades", "categories"]
# The metric card's first example ("How to Use"), one row per query.
EXAMPLE = {
    "predictions": [["b", "a", "e"], ["d", "a"]],
    "references": [["a", "b", "c"], ["d"]],
    "grades": [["L1", "L2", "L1"], ["N1"]],
    "categories": [["x-1", "y-2", "x-3"], ["z-4"]],
    "k": [2],
}

metric = evaluate.load(str(METRIC_FILE))
READINGS = sys.modules[type(metric).__module__].READINGS  # each open rule, its readings the default first
# the table's cells checked as the metric checks its arguments, by the copy it loaded
shared = importlib.import_module(type(metric).__module__.rsplit(".", 1)[0] + ".shared")


def compute(queries, k, no_l1, recall_denominator, covered_by, category, ideal) -> dict:
    """The metric on the table's rows, with the cutoffs ``k`` and a reading of each open rule (``READINGS``)."""
    readings = dict(no_l1=no_l1, recall_denominator=recall_denominator, covered_by=covered_by, category=category)
    try:
        columns = shared.table_columns(queries, COLUMNS)
        return metric.compute(**columns, k=shared.cutoff_list(k), **readings, ideal=ideal)
    except ValueError as err:  # a row, cell or input the metric refuses: one line on the page
        raise gr.Error(str(err)) from None


def table_of(example: dict) -> list:
    """The example as the table shows it: one row per query, comma-separated cells."""
    return [[", ".join(example[name][i]) for name in COLUMNS] for i in range(len(example["predictions"]))]


with gr.Blocks(title="MIPR metric") as demo:
    gr.Markdown(
        "# MIPR metric\n\nnDCG@k (gains L1=2, L2=1), R-L1@k, Hit-L1@1 and Hit-L1@k, SC-R-L1@k and SC-R-L1@k* "
        "(values in [0, 1]). One row per query: the ranked item ids (best first), the judged item ids, their grades "
        "(L1, L2, N1, N2, N3) and their `treecate_full_path`; a cell is comma-separated values or a JSON list."
    )
    queries = gr.Dataframe(
        value=table_of(EXAMPLE),
        headers=COLUMNS,
        datatype="str",
        type="array",
        column_count=len(COLUMNS),
        column_limits=(len(COLUMNS), len(COLUMNS)),
        interactive=True,
        label="queries",
    )
    k = gr.Textbox(value=",".join(map(str, EXAMPLE["k"])), label="k (cutoffs, comma-separated)")
    with gr.Row():
        options = [
            gr.Dropdown(list(reading.choices), value=reading.default, label=name, info=reading.decides)
            for name, reading in READINGS.items()
        ]
    button = gr.Button("Compute", variant="primary")
    scores = gr.JSON(label="scores")
    button.click(compute, inputs=[queries, k, *options], outputs=scores, api_name="compute")

if __name__ == "__main__":
    demo.launch()
