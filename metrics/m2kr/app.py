"""The metric's Hub Space: a table of queries in (each cell a list of passage ids), the scores out.

The page is built with gradio itself (`python app.py` starts it; the card's `sdk_version` names the gradio it is
tested with). A Space runs this file from a folder named `app`, where `evaluate.load(<folder>)` would take this
very file for the metric script, so the metric is loaded by its own file name.
"""

import importlib
from pathlib import Path

import evaluate
import gradio as gr

METRIC_FILE = Path(__file__).resolve().parent / "m2kr.py"
COLUMNS = ["predictions", "references"]
VARIANTS = ["recall", "hit", "strict"]  # m2kr_measures.VARIANTS: Recall@k, Hit@k, StrictRecall@k
# The metric card's first example ("How to Use"), one row per query.
EXAMPLE = {
    "predictions": [["x", "a", "y"], ["c", "z", "q", "b"]],
    "references": [["a"], ["b", "c"]],
    "variants": ["recall", "hit"],
}
DEFAULT_K = [1, 3, 5]

metric = evaluate.load(str(METRIC_FILE))
# the table's cells checked as the metric checks its arguments, by the copy it loaded
shared = importlib.import_module(type(metric).__module__.rsplit(".", 1)[0] + ".shared")


def compute(queries, k, variants) -> dict:
    """The metric on the table's rows, with the cutoffs ``k`` and the measures' ``variants``."""
    try:
        columns = shared.table_columns(queries, COLUMNS)
        return metric.compute(**columns, k=shared.cutoff_list(k), variants=list(variants))
    except ValueError as err:  # a row, cell or input the metric refuses: one line on the page
        raise gr.Error(str(err)) from None


def table_of(example: dict) -> list:
    """The example as the table shows it: one row per query, comma-separated cells."""
    return [[", ".join(example[name][i]) for name in COLUMNS] for i in range(len(example["predictions"]))]


with gr.Blocks(title="M2KR metric") as demo:
    gr.Markdown(
        "# M2KR metric\n\nRecall@k against the full positive set and Recall-mean (the M2KR track score), with the "
        "hit-rate and strict variants (values in [0, 1]). One row per query: the ranked passage ids (best first) and "
        "the positive passage ids; a cell is comma-separated values or a JSON list."
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
    k = gr.Textbox(value=",".join(map(str, DEFAULT_K)), label="k (cutoffs, comma-separated)")
    variants = gr.CheckboxGroup(VARIANTS, value=EXAMPLE["variants"], label="variants")
    button = gr.Button("Compute", variant="primary")
    scores = gr.JSON(label="scores")
    button.click(compute, inputs=[queries, k, variants], outputs=scores, api_name="compute")

if __name__ == "__main__":
    demo.launch()
