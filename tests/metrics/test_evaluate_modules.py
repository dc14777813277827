"""The evaluate modules: offline loading, doctests, cards showing the same examples, same numbers as the math."""

import doctest
import inspect
import re
import sys

import evaluate
import pytest
from _metrics_helpers import M2KR
from _metrics_helpers import MIPR
from _metrics_helpers import random_m2kr
from _metrics_helpers import random_mipr
from _paths import ROOT


def examples(text):
    return [line.strip() for line in text.splitlines() if re.match(r"\s*(>>>|\.\.\.|\{)", line)]


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
def test_doctests_pass_and_card_shows_the_same_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    module = sys.modules[type(evaluate.load(f"metrics/{name}")).__module__]
    runner = doctest.DocTestRunner()
    test = doctest.DocTestParser().get_doctest(module._KWARGS_DESCRIPTION, {}, name, None, 0)
    assert len(test.examples) >= 4
    assert runner.run(test).failed == 0
    card = (ROOT / "metrics" / name / "README.md").read_text(encoding="utf-8")
    assert examples(card) == examples(module._KWARGS_DESCRIPTION)


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
def test_folder_is_self_contained(name):
    allowed = {"datasets", "evaluate", "numpy", "pyarrow", "pathlib", "dataclasses", "json"}
    space = {"gradio", "importlib", "sys"}  # the Space's page (app.py), which the metric module never imports
    for path in (ROOT / "metrics" / name).glob("*.py"):
        for line in path.read_text().splitlines():
            match = re.match(r"(?:from|import)\s+([\w.]+)", line)
            if match and not match.group(1).startswith("."):
                assert match.group(1).split(".")[0] in allowed | (space if path.name == "app.py" else set()), line


def test_mipr_module_matches_the_measures():
    query_ids, judged, grades, categories, rankings = random_mipr(11)
    metric = evaluate.load(str(ROOT / "metrics" / "mipr"))
    result = metric.compute(
        predictions=rankings,
        references=judged,
        grades=grades,
        categories=categories,
        query_ids=query_ids,
        k=[1, 5, 10],
        per_query=True,
        no_l1="skip",
        recall_denominator="capped",
        category="leaf",
    )
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    expected = MIPR.evaluate_run(
        qrels,
        rankings,
        k=[1, 5, 10],
        per_query=True,
        no_l1="skip",
        recall_denominator="capped",
        category="leaf",
    )
    assert result == expected
    assert result["per_query"]["query_id"] == query_ids and None in result["per_query"]["R-L1@5"]


def test_mipr_module_takes_every_reading_with_the_same_defaults():
    module = sys.modules[type(evaluate.load(str(ROOT / "metrics" / "mipr"))).__module__]
    parameters = inspect.signature(module.Mipr._compute).parameters
    assert {name: parameters[name].default for name in MIPR.READINGS} == {
        name: reading.default for name, reading in MIPR.READINGS.items()
    }
    card = (ROOT / "metrics/mipr/README.md").read_text().splitlines()
    for name, reading in MIPR.READINGS.items():  # the description and the card show the declaration's own row
        assert reading.row(name) in module._DESCRIPTION.splitlines() and reading.row(name) in card


def test_both_metric_folders_carry_the_same_shared_file():
    # each folder must stand alone, so the shared helpers are copied; this keeps the copies equal
    assert (ROOT / "metrics" / "m2kr" / "shared.py").read_bytes() == (
        ROOT / "metrics" / "mipr" / "shared.py"
    ).read_bytes()


def test_m2kr_module_matches_the_measures():
    query_ids, positives, rankings = random_m2kr(12)
    metric = evaluate.load(str(ROOT / "metrics" / "m2kr"))
    result = metric.compute(predictions=rankings, references=positives, variants=["recall", "strict"], per_query=True)
    expected = M2KR.evaluate_run(M2KR.Positives(positives), rankings, variants=("recall", "strict"), per_query=True)
    assert result == expected


def test_module_input_errors_name_the_query():
    metric = evaluate.load(str(ROOT / "metrics" / "mipr"))
    with pytest.raises(ValueError, match=r"query 'q1', position 2 lists 'a' a second time"):
        metric.compute(
            predictions=[["a", "a"]], references=[["a"]], grades=[["L1"]], categories=[["x"]], query_ids=["q1"]
        )
