import itertools
import math
import random

import numpy as np
import pyarrow as pa
import pytest
from _metrics_helpers import MIPR
from _metrics_helpers import plain_mean
from _metrics_helpers import plain_mipr
from _metrics_helpers import plain_oracle
from _metrics_helpers import pytrec_mipr
from _metrics_helpers import random_mipr

from mmrhub.benchmarks import mipr as mipr_benchmark
from mmrhub.benchmarks.mipr import main_categories as mipr_main_categories
from mmrhub.scoring.groups import group_means

CUTOFFS = (1, 3, 10, 25)


def score(query_ids, judged, grades, categories, rankings, **options):
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    return MIPR.evaluate_run(qrels, rankings, per_query=True, **options)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_query_values_match_pytrec_eval(seed):
    query_ids, judged, grades, categories, rankings = random_mipr(seed)
    result = score(query_ids, judged, grades, categories, rankings, k=CUTOFFS)["per_query"]
    for k in CUTOFFS:
        trec = pytrec_mipr(query_ids, judged, grades, rankings, k)
        for row, qid in enumerate(query_ids):
            assert result[f"nDCG@{k}"][row] == pytest.approx(trec[qid][f"ndcg_cut_{k}"], abs=1e-12)
            assert result[f"R-L1@{k}"][row] == pytest.approx(trec[qid][f"recall_{k}"], abs=1e-12)
            assert result[f"Hit-L1@{k}"][row] == trec[qid][f"success_{k}"]
            assert result["Hit-L1@1"][row] == trec[qid]["success_1"]


@pytest.mark.parametrize("seed", [3, 4])
def test_every_measure_matches_plain_loops(seed):
    query_ids, judged, grades, categories, rankings = random_mipr(seed)
    result = score(query_ids, judged, grades, categories, rankings, k=CUTOFFS)
    for k in CUTOFFS:
        plain = [plain_mipr(j, g, c, r, k) for j, g, c, r in zip(judged, grades, categories, rankings)]
        for name, key in [("nDCG", "ndcg"), ("R-L1", "recall"), ("Hit-L1", "hit"), ("SC-R-L1", "sc")]:
            assert result["per_query"][f"{name}@{k}"] == pytest.approx([p[key] for p in plain], abs=1e-12)
            assert result[f"{name}@{k}"] == pytest.approx(np.mean([p[key] for p in plain]), abs=1e-12)
        multi = [p["sc"] for p in plain if p["multi"]]
        assert result[f"SC-R-L1@{k}*"] == pytest.approx(np.mean(multi), abs=1e-12)
        assert result["num_multi_category_queries"] == len(multi)
    assert result["Hit-L1@1"] == pytest.approx(np.mean([p["hit1"] for p in plain]))
    # the random data does exercise the edges
    assert any(not any(g == "L1" for g in labels) for labels in grades)
    assert any(len(r) < 10 for r in rankings)
    assert 0 < result["num_multi_category_queries"] < len(query_ids)


ALL_READINGS = [
    dict(zip(MIPR.READINGS, values)) for values in itertools.product(*(r.choices for r in MIPR.READINGS.values()))
]


@pytest.mark.parametrize("reading", ALL_READINGS, ids=lambda r: "-".join(r.values()))
def test_every_reading_matches_plain_loops(reading):
    query_ids, judged, grades, categories, rankings = random_mipr(13)
    result = score(query_ids, judged, grades, categories, rankings, k=(3, 10), **reading)
    for k in (3, 10):
        plain = [plain_mipr(j, g, c, r, k, **reading) for j, g, c, r in zip(judged, grades, categories, rankings)]
        for name, key in [("nDCG", "ndcg"), ("R-L1", "recall"), ("Hit-L1", "hit"), ("SC-R-L1", "sc")]:
            values = [p[key] for p in plain]
            assert result["per_query"][f"{name}@{k}"] == pytest.approx(values, abs=1e-12)
            assert result[f"{name}@{k}"] == pytest.approx(plain_mean(values), abs=1e-12)
        assert result[f"SC-R-L1@{k}*"] == pytest.approx(plain_mean([p["sc"] for p in plain if p["multi"]]), abs=1e-12)
        assert result["num_multi_category_queries"] == sum(p["multi"] for p in plain)


def test_each_reading_changes_the_scores_of_the_random_data():
    query_ids, judged, grades, categories, rankings = random_mipr(13)
    default = score(query_ids, judged, grades, categories, rankings, k=(3,))
    assert default == score(query_ids, judged, grades, categories, rankings, k=(3,), **ALL_READINGS[0])
    for name, reading in MIPR.READINGS.items():
        other = score(query_ids, judged, grades, categories, rankings, k=(3,), **{name: list(reading.choices)[1]})
        assert other != default, name


def test_readings_are_data_with_a_reason_for_each_default():
    assert {name: tuple(reading.choices) for name, reading in MIPR.READINGS.items()} == {
        "no_l1": ("zero", "skip"),
        "recall_denominator": ("judged", "capped"),
        "covered_by": ("L1", "judged"),
        "category": ("path", "leaf"),
        "ideal": ("cutoff", "all"),
    }
    for reading in MIPR.READINGS.values():
        assert reading.decides and reading.status.startswith("our reading") and reading.why
        assert all(reading.choices.values()) and reading.default == next(iter(reading.choices))


def test_the_commands_take_each_reading_as_declared():
    """Each open rule is declared once: the commands' options are its name, its readings (the default first) and
    the card's words without their Markdown."""
    from mmrhub.benchmarks import MIPR as BENCHMARK

    options = {option.name: option for option in BENCHMARK.options if not option.oracle}
    assert list(options) == list(MIPR.READINGS)
    for name, reading in MIPR.READINGS.items():
        assert options[name].choices == tuple(reading.choices) and options[name].default == reading.default
        words = options[name].help
        assert "`" not in words and "\\|" not in words and reading.why.replace("`", "") in words
        assert all(
            value in words and meaning.replace("`", "").replace("\\|", "|") in words
            for value, meaning in reading.choices.items()
        )


@pytest.mark.parametrize(
    "options, message",
    [
        ({"no_l1": "maybe"}, r"no_l1='maybe': expected one of \['zero', 'skip'\]"),
        ({"ideal": "pool"}, r"ideal='pool': expected one of \['cutoff', 'all'\]"),
        ({"capped_recall": True}, r"unknown option 'capped_recall'; expected one of \['no_l1', "),
    ],
)
def test_unknown_readings_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        MIPR.evaluate_run(MIPR.Qrels([["a"]], [["L1"]], [["x"]]), [["a"]], **options)


def test_readings_on_a_hand_computed_case():
    # q1 judges a (L1, x-1), b (L2, y-2), c (L1, z-1), d (N1, z-1); q2 has no L1. Leaves: x-1 and z-1 are both "1".
    judged, grades = [["a", "b", "c", "d"], ["e"]], [["L1", "L2", "L1", "N1"], ["L2"]]
    categories, rankings = [["x-1", "y-2", "z-1", "z-1"], ["w-3"]], [["d", "b"], ["e"]]
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=["q1", "q2"])

    def run(**reading):
        return MIPR.evaluate_run(qrels, rankings, k=[1, 2], per_query=True, **reading)

    assert run()["per_query"]["SC-R-L1@2"] == [0.0, 0.0]
    assert run(covered_by="judged")["per_query"]["SC-R-L1@2"] == [0.5, 0.0]  # d (N1) covers z-1
    assert run(category="leaf")["num_multi_category_queries"] == 0
    assert run(category="leaf", covered_by="judged")["per_query"]["SC-R-L1@2"] == [1.0, 0.0]
    skip = run(no_l1="skip")
    assert skip["per_query"]["R-L1@1"] == [0.0, None] and skip["R-L1@1"] == 0.0
    assert skip["per_query"]["nDCG@1"] == [0.0, 1.0]  # nDCG and Hit keep every query
    idcg_all = 2 + 2 / math.log2(3) + 1 / math.log2(4)
    assert run(ideal="all")["per_query"]["nDCG@2"][0] == pytest.approx((1 / math.log2(3)) / idcg_all)
    assert run(ideal="all")["per_query"]["nDCG@2"][1] == 1.0
    capped = run(recall_denominator="capped")["per_query"]
    assert capped["R-L1@1"] == [0.0, 0.0] and run(recall_denominator="capped", no_l1="skip")["R-L1@2"] == 0.0


def test_a_mean_over_no_query_is_none():
    # no query has two L1 categories: SC-R-L1@k* is undefined, not 0
    result = score(["a", "b"], [["x"], ["y"]], [["L1"], ["N2"]], [["c-1"], ["c-2"]], [["x"], ["y"]], k=[10])
    assert result["SC-R-L1@10*"] is None and result["num_multi_category_queries"] == 0
    assert result["SC-R-L1@10"] == 0.5
    # no query has an L1 and "skip" leaves them all out: the R-L1 and SC-R-L1 means are undefined too
    qrels = MIPR.Qrels([["x"]], [["L2"]], [["c-1"]], query_ids=["a"])
    result = MIPR.evaluate_run(qrels, [["x"]], k=[10], per_query=True, no_l1="skip")
    assert (result["R-L1@10"], result["SC-R-L1@10"], result["SC-R-L1@10*"]) == (None, None, None)
    assert result["per_query"]["R-L1@10"] == [None] and result["nDCG@10"] == 1.0
    groups = group_means(result["per_query"], mipr_main_categories(qrels))
    assert groups["(no L1)"]["R-L1@10"] is None and groups["(no L1)"]["nDCG@10"] == 1.0


@pytest.mark.parametrize("order", ["baseline", "coverage"])
@pytest.mark.parametrize("category", ["path", "leaf"])
@pytest.mark.parametrize("covered_by", ["L1", "judged"])
def test_oracle_matches_plain_loops(order, category, covered_by):
    query_ids, judged, grades, categories, rankings = random_mipr(14)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    oracle = mipr_benchmark.oracle(qrels, rankings, order=order, category=category, covered_by=covered_by)
    rows = zip(judged, grades, categories, rankings)
    assert oracle == [plain_oracle(*row, order=order, category=category, covered_by=covered_by) for row in rows]
    assert (
        mipr_benchmark.oracle(qrels, pa.array(rankings), order=order, category=category, covered_by=covered_by)
        == oracle
    )
    assert oracle != rankings and [sorted(r) for r in oracle] == [sorted(r) for r in rankings]


def test_the_coverage_oracle_covers_at_least_as_much():
    query_ids, judged, grades, categories, rankings = random_mipr(15)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    by_grade = MIPR.evaluate_run(qrels, mipr_benchmark.oracle(qrels, rankings), k=[1, 3], per_query=True)
    covering = MIPR.evaluate_run(qrels, mipr_benchmark.oracle(qrels, rankings, "coverage"), k=[1, 3], per_query=True)
    for k in (1, 3):
        assert all(c >= b for c, b in zip(covering["per_query"][f"SC-R-L1@{k}"], by_grade["per_query"][f"SC-R-L1@{k}"]))
        assert covering["per_query"][f"nDCG@{k}"] == by_grade["per_query"][f"nDCG@{k}"]
    assert covering["SC-R-L1@3"] > by_grade["SC-R-L1@3"]


def test_oracle_on_a_hand_computed_case():
    qrels = MIPR.Qrels([["a", "b", "c", "d"]], [["L1", "L1", "L2", "L1"]], [["x", "x", "y", "z"]])
    assert mipr_benchmark.oracle(qrels, [["e", "c", "a", "b", "d"]]) == [["a", "b", "d", "c", "e"]]
    assert mipr_benchmark.oracle(qrels, [["e", "c", "a", "b", "d"]], order="coverage") == [["a", "d", "b", "c", "e"]]
    with pytest.raises(ValueError, match=r"order='best': expected one of \['baseline', 'coverage'\]"):
        mipr_benchmark.oracle(qrels, [["a"]], order="best")


def test_hand_computed_case():
    # q1: b (L2), a (L1), e (unjudged); judged L1 a (x-1), c (x-3); L2 b. q2: nothing relevant.
    result = score(
        ["q1", "q2"],
        [["a", "b", "c"], ["d"]],
        [["L1", "L2", "L1"], ["N1"]],
        [["x-1", "y-2", "x-3"], ["z-4"]],
        [["b", "a", "e"], ["d", "a"]],
        k=[2, 10],
        recall_denominator="capped",
    )
    idcg2 = 2 + 2 / math.log2(3)
    assert result["per_query"]["nDCG@2"] == pytest.approx([(1 + 2 / math.log2(3)) / idcg2, 0.0])
    idcg10 = 2 + 2 / math.log2(3) + 1 / math.log2(4)
    assert result["per_query"]["nDCG@10"][0] == pytest.approx((1 + 2 / math.log2(3)) / idcg10)
    assert result["per_query"]["R-L1@2"] == [0.5, 0.0]  # capped: min(2, |L1|) = 2; the no-L1 query scores 0
    assert result["R-L1@2"] == 0.25
    assert result["per_query"]["R-L1@10"] == [0.5, 0.0]
    assert result["per_query"]["Hit-L1@1"] == [0.0, 0.0]
    assert result["per_query"]["Hit-L1@2"] == [1.0, 0.0]
    assert result["per_query"]["SC-R-L1@2"] == [0.5, 0.0]
    assert result["SC-R-L1@2*"] == 0.5  # only q1 has two L1 categories
    assert result["num_multi_category_queries"] == 1


def test_single_category_query_left_out_of_star():
    result = score(
        ["one", "two"],
        [["a", "b"], ["c", "d"]],
        [["L1", "L1"], ["L1", "L1"]],
        [["x-1", "x-1"], ["x-1", "y-2"]],
        [["a"], ["c"]],
        k=[10],
    )
    assert result["per_query"]["SC-R-L1@10"] == [1.0, 0.5]
    assert result["SC-R-L1@10"] == 0.75
    assert result["SC-R-L1@10*"] == 0.5


def test_breakdown_by_top_level_category_partitions_the_queries():
    query_ids, judged, grades, categories, rankings = random_mipr(5)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    result = MIPR.evaluate_run(qrels, rankings, per_query=True)
    groups = group_means(result["per_query"], mipr_main_categories(qrels))
    assert sum(g["num_queries"] for g in groups.values()) == len(query_ids)
    assert groups["(no L1)"]["num_queries"] == sum(not any(x == "L1" for x in g) for g in grades)
    weighted = sum(g["nDCG@10"] * g["num_queries"] for g in groups.values()) / len(query_ids)
    assert weighted == pytest.approx(result["nDCG@10"])
    assert set(groups) == {"(no L1)", "top0", "top1", "top2"}


def test_arrow_and_python_rankings_agree():
    query_ids, judged, grades, categories, rankings = random_mipr(6)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    assert MIPR.evaluate_run(qrels, pa.array(rankings)) == MIPR.evaluate_run(qrels, rankings)


@pytest.mark.parametrize(
    "judged, grades, categories, rankings, message",
    [
        ([["a"]], [["L1"]], [["x"]], [["a", "b", "a"]], r"predictions: query 'q', position 3 lists 'a' a second time"),
        ([["a"]], [["L3"]], [["x"]], [["a"]], r"unknown grade 'L3' at query 'q', position 1; expected one of \['L1', "),
        (
            [["a", "a"]],
            [["L1", "N1"]],
            [["x", "x"]],
            [["a"]],
            r"references: query 'q', position 2 lists 'a' a second time",
        ),
        ([["a", "b"]], [["L1"]], [["x", "x"]], [["a"]], r"references grades: row 1 has 1 values for 2 item ids"),
        ([["a"]], [["L1"]], [["x"], ["y"]], [["a"]], r"references categories: 2 lists for 1 queries"),
        ([["a"]], [["L1"]], [["x"]], [["a"], ["b"]], r"^2 rankings for 1 queries$"),
        ([["a"]], [["L1"]], [["x"]], [[None]], r"predictions: row 1, position 1 is null"),
        ([["a"]], [["L1"]], [["x"]], [None], r"predictions: row 1 is null, expected a list of strings"),
        ([["a"]], [[None]], [["x"]], [["a"]], r"references grades: row 1, position 1 is null"),
    ],
)
def test_bad_inputs_are_named(judged, grades, categories, rankings, message):
    with pytest.raises(ValueError, match=message):
        MIPR.evaluate_run(MIPR.Qrels(judged, grades, categories, query_ids=["q"]), rankings)


def test_a_repeat_below_the_scored_prefix_is_not_read():
    qrels = MIPR.Qrels([["a"]], [["L1"]], [["x"]])
    assert MIPR.evaluate_run(qrels, [["a"] + [f"u{i}" for i in range(10)] + ["a"]], k=[10])["R-L1@10"] == 1.0


def test_query_ids_must_align():
    with pytest.raises(ValueError, match=r"^2 query ids for 1 queries$"):
        MIPR.Qrels([["a"]], [["L1"]], [["x"]], query_ids=["q", "r"])


def test_a_query_without_judgments_scores_zero():
    qrels = MIPR.Qrels([[], ["a"]], [[], ["L1"]], [[], ["x"]])
    assert MIPR.evaluate_run(qrels, [["a"], ["a"]], k=[1], per_query=True)["per_query"]["nDCG@1"] == [0.0, 1.0]


def test_cutoffs_must_be_positive():
    with pytest.raises(ValueError, match=r"^k: expected a whole number from 1 to 1,000, got 0$"):
        MIPR.evaluate_run(MIPR.Qrels([["a"]], [["L1"]], [["x"]]), [["a"]], k=[0])


# The lookups behind the scores: exact string matching, whatever the ids look like.


def renamed(seed, *lists):
    """random_mipr's ids renamed to ids of mixed byte lengths (1 to 30, some non-ASCII), same structure."""
    rng = random.Random(seed)
    names = {}
    for values in lists:
        for row in values:
            for item in row:
                names.setdefault(
                    item, "".join(rng.choice("ab\u00e9\u4e2d0") for _ in range(rng.randrange(1, 31))) + item
                )
    return [[[names[item] for item in row] for row in values] for values in lists]


@pytest.mark.parametrize("seed", [8, 9])
def test_ids_of_mixed_lengths_match_pytrec_eval(seed):
    query_ids, judged, grades, categories, rankings = random_mipr(seed)
    judged, rankings = renamed(seed, judged, rankings)
    result = score(query_ids, judged, grades, categories, rankings, k=[10])["per_query"]
    trec = pytrec_mipr(query_ids, judged, grades, rankings, 10)
    assert result["nDCG@10"] == pytest.approx([trec[q]["ndcg_cut_10"] for q in query_ids], abs=1e-12)
    assert result["R-L1@10"] == pytest.approx([trec[q]["recall_10"] for q in query_ids], abs=1e-12)


def test_every_ranking_container_gives_the_same_scores():
    query_ids, judged, grades, categories, rankings = random_mipr(10)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    expected = MIPR.evaluate_run(qrels, rankings, per_query=True)
    assert expected["per_query"]["nDCG@10"].count(0.0) < len(query_ids)
    for same in ([tuple(r) for r in rankings], iter(rankings), pa.chunked_array([pa.array(rankings)])):
        assert MIPR.evaluate_run(qrels, same, per_query=True) == expected


def test_an_id_holding_nul_is_still_matched():
    qrels = MIPR.Qrels([["a\0b", "c"]], [["L1", "L2"]], [["x", "y"]])
    result = MIPR.evaluate_run(qrels, [["c", "a\0b", "a"]], k=[2], per_query=True)["per_query"]
    assert result["nDCG@2"] == [pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))]


def test_a_non_string_id_is_named():
    qrels = MIPR.Qrels([["a"]], [["L1"]], [["x"]])
    with pytest.raises(ValueError, match=r"^predictions: row 1, position 2 is int 5, expected one list of strings"):
        MIPR.evaluate_run(qrels, [["a", 5]])


def test_an_unknown_grade_of_another_length_is_named():
    with pytest.raises(ValueError, match=r"unknown grade 'Bad' at row 2, position 2; expected one of"):
        MIPR.Qrels([["a"], ["b", "c"]], [["L1"], ["N1", "Bad"]], [["x"], ["y", "z"]])
