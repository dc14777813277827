import numpy as np
import pyarrow as pa
import pytest
from _metrics_helpers import M2KR
from _metrics_helpers import plain_m2kr
from _metrics_helpers import plain_m2kr_oracle
from _metrics_helpers import pytrec_m2kr
from _metrics_helpers import random_m2kr

from mmrhub.benchmarks import m2kr as m2kr_benchmark
from mmrhub.scoring.groups import group_means

CUTOFFS = (1, 3, 5)


def score(query_ids, positives, rankings, **options):
    return M2KR.evaluate_run(M2KR.Positives(positives, query_ids=query_ids), rankings, per_query=True, **options)


@pytest.mark.parametrize("seed", [0, 1])
def test_recall_and_hit_match_pytrec_eval(seed):
    query_ids, positives, rankings = random_m2kr(seed)
    result = score(query_ids, positives, rankings, variants=("recall", "hit"))["per_query"]
    for k in CUTOFFS:
        trec = pytrec_m2kr(query_ids, positives, rankings, k)
        assert result[f"Recall@{k}"] == pytest.approx([trec[q][f"recall_{k}"] for q in query_ids], abs=1e-12)
        assert result[f"Hit@{k}"] == [trec[q][f"success_{k}"] for q in query_ids]


@pytest.mark.parametrize("seed", [2, 3])
def test_every_variant_matches_plain_loops(seed):
    query_ids, positives, rankings = random_m2kr(seed)
    result = score(query_ids, positives, rankings, variants=("recall", "hit", "strict"))
    for variant, prefix in [("recall", "Recall"), ("hit", "Hit"), ("strict", "StrictRecall")]:
        per_k = {k: [plain_m2kr(p, r, k)[variant] for p, r in zip(positives, rankings)] for k in CUTOFFS}
        for k in CUTOFFS:
            assert result["per_query"][f"{prefix}@{k}"] == pytest.approx(per_k[k], abs=1e-12)
        assert result[f"{prefix}-mean"] == pytest.approx(np.mean([np.mean(per_k[k]) for k in CUTOFFS]))
    assert any(len(p) > 1 for p in positives)
    assert result["Recall@5"] != result["Hit@5"]  # multi-positive queries separate the variants


def test_multi_positive_query_needs_all_positives():
    result = score(
        ["1", "2"], [["a"], ["b", "c"]], [["x", "a", "y"], ["c", "z", "q", "b"]], variants=("recall", "hit", "strict")
    )
    assert result["per_query"]["Recall@1"] == [0.0, 0.5]
    assert result["per_query"]["Recall@3"] == [1.0, 0.5]
    assert result["per_query"]["StrictRecall@3"] == [1.0, 0.0]
    assert result["per_query"]["Hit@1"] == [0.0, 1.0]
    assert result["Recall-mean"] == pytest.approx((0.25 + 0.75 + 1.0) / 3)


def test_breakdown_by_task():
    result = score(["1", "2", "3"], [["a"], ["b"], ["c"]], [["a"], ["x"], ["c"]])
    by_task = group_means(result["per_query"], ["image", "image+text", "image+text"])
    assert by_task["image"]["Recall@1"] == 1.0
    assert by_task["image+text"]["Recall@1"] == 0.5
    assert by_task["image+text"]["num_queries"] == 2
    with pytest.raises(ValueError, match=r"^2 group labels for 3 queries$"):
        group_means(result["per_query"], ["image", "image+text"])


@pytest.mark.parametrize(
    "positives, rankings, message",
    [
        ([[]], [["a"]], r"references: query '7' has no positive passage"),
        ([["a", "a"]], [["a"]], r"references: query '7', position 2 lists 'a' a second time"),
        ([["a"]], [["b", "a", "b"]], r"predictions: query '7', position 3 lists 'b' a second time"),
        ([["a"]], [["a"], ["b"]], r"^2 rankings for 1 queries$"),
    ],
)
def test_bad_inputs_are_named(positives, rankings, message):
    with pytest.raises(ValueError, match=message):
        M2KR.evaluate_run(M2KR.Positives(positives, query_ids=["7"]), rankings)


def test_rows_without_query_ids_are_counted_from_1():
    with pytest.raises(ValueError, match=r"^references: row 2 has no positive passage$"):
        M2KR.Positives([["a"], []])
    with pytest.raises(ValueError, match=r"^predictions: row 2, position 3 lists 'b' a second time$"):
        M2KR.evaluate_run(M2KR.Positives([["a"], ["b"]]), [["a"], ["c", "b", "b"]])


def test_unknown_variant():
    with pytest.raises(ValueError, match=r"^variants: 'mrr' is not one of recall, hit, strict$"):
        score(["1"], [["a"]], [["a"]], variants=("mrr",))


def test_arrow_and_python_rankings_agree():
    query_ids, positives, rankings = random_m2kr(4)
    prepared = M2KR.Positives(positives, query_ids=query_ids)
    expected = M2KR.evaluate_run(prepared, rankings, per_query=True)
    assert expected["Recall@5"] > 0
    assert M2KR.evaluate_run(prepared, pa.array(rankings), per_query=True) == expected


def test_oracle_puts_the_positives_first():
    query_ids, positives, rankings = random_m2kr(5)
    prepared = M2KR.Positives(positives, query_ids=query_ids)
    oracle = m2kr_benchmark.oracle(prepared, rankings)
    assert oracle == [plain_m2kr_oracle(p, r) for p, r in zip(positives, rankings)]
    assert oracle != rankings and m2kr_benchmark.oracle(prepared, pa.array(rankings)) == oracle
    assert m2kr_benchmark.oracle(M2KR.Positives([["b", "c"]]), [["a", "c", "d", "b"]]) == [["c", "b", "a", "d"]]


def test_a_mean_over_no_query_is_none():
    result = M2KR.evaluate_run(M2KR.Positives([]), [])
    assert result == {"Recall@1": None, "Recall@3": None, "Recall@5": None, "Recall-mean": None, "num_queries": 0}
