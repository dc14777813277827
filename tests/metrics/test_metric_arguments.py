"""The metric modules check their arguments as the commands check their options (the same converters, from the
folders' shared.py): each refusal a ValueError naming the argument and what was expected."""

import evaluate
import pytest
from _metrics_helpers import M2KR
from _metrics_helpers import MIPR
from _paths import ROOT

from mmrhub.cli import build_parser

JUDGED = {"references": [["a", "b"]], "grades": [["L1", "L2"]], "categories": [["x", "y"]]}


@pytest.fixture(scope="module")
def modules():
    return {name: evaluate.load(str(ROOT / "metrics" / name)) for name in ("mipr", "m2kr")}


def compute(modules, name, predictions=(("a", "b"),), **kwargs):
    columns = JUDGED if name == "mipr" else {"references": [["a"]]}
    return modules[name].compute(predictions=[list(p) for p in predictions], **columns, **kwargs)


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"per_query": "no"}, "per_query: expected True or False, got 'no'"),
        ({"per_query": 1}, "per_query: expected True or False, got 1"),
        ({"k": [0]}, "k: expected a whole number from 1 to 1,000, got 0"),
        ({"k": [10**9]}, "k: expected a whole number from 1 to 1,000, got 1,000,000,000"),
        ({"k": [2.5]}, "k: expected a whole number from 1 to 1,000, got 2.5"),
        ({"k": [True]}, "k: expected a whole number from 1 to 1,000, got True"),
        ({"k": []}, "k: expected a non-empty list of cutoffs from 1 to 1,000, got []"),
        ({"k": "10"}, "k: expected a non-empty list of cutoffs from 1 to 1,000, got '10'"),
    ],
)
def test_wrong_keyword_values_are_refused_by_name(modules, name, kwargs, message):
    with pytest.raises(ValueError) as error:
        compute(modules, name, **kwargs)
    assert str(error.value) == message


def test_one_cutoff_may_be_given_as_an_int(modules):
    assert (
        compute(modules, "m2kr", k=3)
        == compute(modules, "m2kr", k=[3])
        == {
            "Recall@3": 1.0,
            "Recall-mean": 1.0,
            "num_queries": 1,
        }
    )


@pytest.mark.parametrize(
    "variants, message",
    [
        ((), "variants: expected a non-empty list of any of recall, hit, strict, got ()"),
        ("hit", "variants: expected a non-empty list of any of recall, hit, strict, got 'hit'"),
        (["hit", "mrr"], "variants: 'mrr' is not one of recall, hit, strict"),
        ([None], "variants: None is not one of recall, hit, strict"),
    ],
)
def test_variants_must_be_a_non_empty_list_of_known_names(modules, variants, message):
    with pytest.raises(ValueError) as error:
        compute(modules, "m2kr", variants=variants)
    assert str(error.value) == message


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
@pytest.mark.parametrize(
    "predictions, message",
    [
        ([[["a"]]], "predictions: row 1, position 1 is list ['a'], expected one list of strings per query"),
        ([["a", ["b"]]], "predictions: row 1, position 2 is list ['b'], expected one list of strings per query"),
        ([["a", 7]], "predictions: row 1, position 2 is int 7, expected one list of strings per query"),
        (["ab"], "predictions: row 1 is a string ('ab'), expected a list of strings"),
    ],
)
def test_predictions_of_the_wrong_depth_or_type_are_refused(modules, name, predictions, message):
    columns = JUDGED if name == "mipr" else {"references": [["a"]]}
    with pytest.raises(ValueError) as error:
        modules[name].compute(predictions=predictions, **columns)
    assert str(error.value) == message


def test_columns_split_over_add_batch_and_compute_name_the_missing_ones(modules):
    metric = modules["mipr"]
    with pytest.raises(ValueError) as error:
        metric.add_batch(predictions=[["a"]], references=[["a"]])
    assert str(error.value) == (
        "mipr: grades, categories missing; every batch needs predictions, references, grades, categories together "
        "(pass them all to the same add_batch or compute call)"
    )
    assert metric.compute(predictions=[["a"]], **JUDGED, k=[1])["nDCG@1"] == 1.0  # the module is still usable


def test_batches_then_compute_still_score(modules):
    metric = modules["m2kr"]
    metric.add_batch(predictions=[["x", "a"]], references=[["a"]])
    metric.add_batch(predictions=[["b"]], references=[["b"]])
    assert metric.compute(k=[1])["Recall@1"] == 0.5


def test_the_measures_check_alike_without_evaluate():
    positives = M2KR.Positives([["a"]])
    with pytest.raises(ValueError, match="^per_query: expected True or False, got 'yes'$"):
        M2KR.evaluate_run(positives, [["a"]], per_query="yes")
    qrels = MIPR.Qrels(**JUDGED)
    with pytest.raises(ValueError, match="^k: expected a whole number from 1 to 1,000, got -1$"):
        MIPR.evaluate_run(qrels, [["a"]], k=[-1])


def test_the_command_and_the_module_refuse_a_cutoff_in_the_same_words(modules, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "m2kr", "--k", "5000"])
    command = capsys.readouterr().err.splitlines()[-1].split("argument --k: ")[1]
    with pytest.raises(ValueError) as error:
        compute(modules, "m2kr", k=[5000])
    assert str(error.value) == f"k: {command}" == "k: expected a whole number from 1 to 1,000, got 5,000"


def test_columns_of_different_lengths_are_refused(modules):
    with pytest.raises(ValueError) as error:
        modules["m2kr"].compute(predictions=[], references=[["a"]])
    assert str(error.value) == (
        "m2kr: rows per column differ (predictions 0, references 1); every column has one row per query"
    )


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
@pytest.mark.parametrize("column", ["predictions", "references"])
def test_a_dict_for_a_column_is_refused_by_name(modules, name, column):
    columns = {"predictions": [["a"]], **(JUDGED if name == "mipr" else {"references": [["a"]]})}
    columns[column] = {"q1": columns[column][0]}
    with pytest.raises(ValueError) as error:
        modules[name].compute(**columns)
    assert str(error.value) == (
        f"{column}: expected one list of strings per query, got dict; for a run keyed by query id pass "
        f"{column}=list(run.values()) and query_ids=list(run)"
    )
