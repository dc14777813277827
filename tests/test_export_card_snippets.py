"""The card's "How to evaluate" snippet runs as written, against the exported folder and the local metric."""

import json
import re

import pytest

from _export_helpers import exported  # noqa: F401 (fixture)
from mmrhub.export.card_text import TEXTS
from pathlib import Path
from mmrhub.truth import load_truth
from mmrhub.truth import read_valid_run
from mmrhub.truth import score
from mmrhub.runs import aligned

RUNS = {"mipr": "data/mipr/baseline/simulated_embedding_top50.json", "m2kr": "data/m2kr/baseline/simulated_top5.json"}


def snippet(benchmark, repo_id, metric_space) -> str:
    text = TEXTS[benchmark]["evaluate"].format(repo_id=repo_id, metric_space=metric_space)
    code = re.search(r"```python\n(.*)```", text, re.S).group(1)
    placeholder = re.compile(r"^run = \{\.\.\.\}.*$", re.M)
    if not placeholder.search(code):
        raise AssertionError("the snippet no longer has a `run = {...}` line for the reader's ranking")
    return placeholder.sub("run = RUN", code)


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_evaluate_snippet_scores_like_the_cli(benchmark, exported, capsys):  # noqa: F811 (fixture)
    root = Path(__file__).resolve().parents[1]
    run_path = root / RUNS[benchmark]
    run = {entry["qid"]: [item["did"] for item in entry["ranked"]] for entry in json.loads(run_path.read_text())}
    code = snippet(benchmark, str(exported(benchmark)), str(root / "metrics" / benchmark))
    exec(compile(code, f"<{benchmark} card snippet>", "exec"), {"RUN": run})
    printed = capsys.readouterr().out

    truth = load_truth(benchmark)
    run_file = read_valid_run(truth, run_path)
    k = [10] if benchmark == "mipr" else [1, 3, 5]
    expected = score(truth, aligned(run_file, truth.query_ids), k=tuple(k))
    name = "nDCG@10" if benchmark == "mipr" else "Recall@5"
    value = float(re.search(rf"'{re.escape(name)}': ([0-9.e-]+)", printed).group(1))
    assert value == pytest.approx(expected[name])
