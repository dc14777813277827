import importlib
import math
import random

import numpy as np
import pytest

from _metrics_helpers import MIPR, plain_mipr, pytrec_mipr, random_mipr

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
    result = score(query_ids, judged, grades, categories, rankings, k=CUTOFFS, capped_recall=True)
    for k in CUTOFFS:
        plain = [plain_mipr(j, g, c, r, k) for j, g, c, r in zip(judged, grades, categories, rankings)]
        for name, key in [("nDCG", "ndcg"), ("R-L1", "recall"), ("R-L1-capped", "capped"), ("Hit-L1", "hit"), ("SC-R-L1", "sc")]:
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


def test_hand_computed_case():
    # q1: b (L2), a (L1), e (unjudged); judged L1 a (x-1), c (x-3); L2 b. q2: nothing relevant.
    result = score(
        ["q1", "q2"], [["a", "b", "c"], ["d"]], [["L1", "L2", "L1"], ["N1"]], [["x-1", "y-2", "x-3"], ["z-4"]],
        [["b", "a", "e"], ["d", "a"]], k=[2, 10], capped_recall=True,
    )
    idcg2 = 2 + 2 / math.log2(3)
    assert result["per_query"]["nDCG@2"] == pytest.approx([(1 + 2 / math.log2(3)) / idcg2, 0.0])
    idcg10 = 2 + 2 / math.log2(3) + 1 / math.log2(4)
    assert result["per_query"]["nDCG@10"][0] == pytest.approx((1 + 2 / math.log2(3)) / idcg10)
    assert result["per_query"]["R-L1@2"] == [0.5, 0.0]  # the no-L1 query scores 0 and stays in the mean
    assert result["R-L1@2"] == 0.25
    assert result["per_query"]["R-L1-capped@2"] == [0.5, 0.0]
    assert result["per_query"]["Hit-L1@1"] == [0.0, 0.0]
    assert result["per_query"]["Hit-L1@2"] == [1.0, 0.0]
    assert result["per_query"]["SC-R-L1@2"] == [0.5, 0.0]
    assert result["SC-R-L1@2*"] == 0.5  # only q1 has two L1 categories
    assert result["num_multi_category_queries"] == 1


def test_single_category_query_left_out_of_star():
    result = score(
        ["one", "two"], [["a", "b"], ["c", "d"]], [["L1", "L1"], ["L1", "L1"]],
        [["x-1", "x-1"], ["x-1", "y-2"]], [["a"], ["c"]], k=[10],
    )
    assert result["per_query"]["SC-R-L1@10"] == [1.0, 0.5]
    assert result["SC-R-L1@10"] == 0.75
    assert result["SC-R-L1@10*"] == 0.5


def test_breakdown_by_top_level_category_partitions_the_queries():
    query_ids, judged, grades, categories, rankings = random_mipr(5)
    result = score(query_ids, judged, grades, categories, rankings, by_category=True)
    groups = result["by_category"]
    assert sum(g["num_queries"] for g in groups.values()) == len(query_ids)
    assert groups["(no L1)"]["num_queries"] == sum(not any(x == "L1" for x in g) for g in grades)
    weighted = sum(g["nDCG@10"] * g["num_queries"] for g in groups.values()) / len(query_ids)
    assert weighted == pytest.approx(result["nDCG@10"])
    assert set(groups) == {"(no L1)", "top0", "top1", "top2"}


def test_arrow_and_python_rankings_agree():
    import pyarrow as pa

    query_ids, judged, grades, categories, rankings = random_mipr(6)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    assert MIPR.evaluate_run(qrels, pa.array(rankings)) == MIPR.evaluate_run(qrels, rankings)


def test_corpus_categories_give_the_same_scores():
    query_ids, judged, grades, categories, rankings = random_mipr(7)
    table = {i: c for items, cats in zip(judged, categories) for i, c in zip(items, cats)}
    corpus = sorted(table) + ["never-judged"]
    qrels = MIPR.Qrels.with_corpus_categories(judged, grades, corpus, [table.get(i, "z-z") for i in corpus], query_ids)
    direct = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    assert MIPR.evaluate_run(qrels, rankings, per_query=True) == MIPR.evaluate_run(direct, rankings, per_query=True)


def test_corpus_categories_need_every_l1_item_in_the_corpus():
    with pytest.raises(ValueError, match=r"query 'q' judges 'b' \(position 2\) L1, but it is not in the corpus"):
        MIPR.Qrels.with_corpus_categories([["a", "b"]], [["N1", "L1"]], ["a"], ["x-y"], query_ids=["q"])
    # only L1 items are looked up (the builder checks every judged item against the corpus)
    qrels = MIPR.Qrels.with_corpus_categories([["a", "b"]], [["L1", "N2"]], ["a"], ["x-y"], query_ids=["q"])
    result = MIPR.evaluate_run(qrels, [["a", "b"]], k=[2], per_query=True)["per_query"]
    assert (result["R-L1@2"], result["SC-R-L1@2"]) == ([1.0], [1.0])


@pytest.mark.parametrize(
    "judged, grades, categories, rankings, message",
    [
        ([["a"]], [["L1"]], [["x"]], [["a", "b", "a"]], r"predictions: query 'q' lists 'a' twice \(positions 1 and 3\)"),
        ([["a"]], [["L3"]], [["x"]], [["a"]], r"unknown grade 'L3' at row 0, position 1; expected one of"),
        ([["a", "a"]], [["L1", "N1"]], [["x", "x"]], [["a"]], r"query 'q' judges 'a' twice \(second at position 2\)"),
        ([["a", "b"]], [["L1"]], [["x", "x"]], [["a"]], r"row 0 has 1 grades for 2 item_ids"),
        ([["a"]], [["L1"]], [["x"]], [["a"], ["b"]], r"2 rankings for 1 judged queries"),
        ([["a"]], [["L1"]], [["x"]], [[None]], r"predictions: row 0, position 1 is null"),
    ],
)
def test_bad_inputs_are_named(judged, grades, categories, rankings, message):
    with pytest.raises(ValueError, match=message):
        MIPR.evaluate_run(MIPR.Qrels(judged, grades, categories, query_ids=["q"]), rankings)


def test_a_repeat_below_the_scored_prefix_is_not_read():
    qrels = MIPR.Qrels([["a"]], [["L1"]], [["x"]])
    assert MIPR.evaluate_run(qrels, [["a"] + [f"u{i}" for i in range(10)] + ["a"]], k=[10])["R-L1@10"] == 1.0


def test_cutoffs_must_be_positive():
    with pytest.raises(ValueError, match=r"cutoffs must be positive integers, got \[0\]"):
        MIPR.evaluate_run(MIPR.Qrels([["a"]], [["L1"]], [["x"]]), [["a"]], k=[0])


# The lookups behind the scores: byte-exact string matching, hashes only choose where to look.

LOOKUP = importlib.import_module(MIPR.__package__ + ".lookup")


def renamed(seed, *lists):
    """random_mipr's ids renamed to ids of mixed byte lengths (1 to 30, some non-ASCII), same structure."""
    rng = random.Random(seed)
    names = {}
    for values in lists:
        for row in values:
            for item in row:
                names.setdefault(item, "".join(rng.choice("ab\u00e9\u4e2d0") for _ in range(rng.randrange(1, 31))) + item)
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
    import pyarrow as pa

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
    with pytest.raises(ValueError, match=r"predictions: expected one list of strings per query"):
        MIPR.evaluate_run(qrels, [["a", 5]])


def test_an_unknown_grade_of_another_length_is_named():
    with pytest.raises(ValueError, match=r"unknown grade 'Bad' at row 1, position 2; expected one of"):
        MIPR.Qrels([["a"], ["b", "c"]], [["L1"], ["N1", "Bad"]], [["x"], ["y", "z"]])


def test_a_hash_collision_on_the_judged_side_takes_the_next_seed(monkeypatch):
    real = LOOKUP._multiplier
    monkeypatch.setattr(LOOKUP, "_multiplier", lambda seed, w: np.uint64(0) if seed == 0 else real(seed, w))
    query_ids, judged, grades, categories, rankings = random_mipr(12)
    qrels = MIPR.Qrels(judged, grades, categories, query_ids=query_ids)
    assert qrels.pairs.seed == 1
    monkeypatch.setattr(LOOKUP, "_multiplier", real)
    assert MIPR.evaluate_run(qrels, rankings) == MIPR.evaluate_run(MIPR.Qrels(judged, grades, categories, query_ids), rankings)


def test_colliding_hashes_are_told_apart_by_their_bytes(monkeypatch):
    # with word multipliers of 0 a hash sees only the length: "ba" and "ab", "c" and "d" collide
    real = LOOKUP._multiplier
    monkeypatch.setattr(LOOKUP, "_multiplier", lambda seed, w: real(seed, w) if w == 0 else np.uint64(0))
    qrels = MIPR.Qrels([["ab", "c"]], [["L1", "L1"]], [["x", "y"]], query_ids=["q"])
    assert MIPR.evaluate_run(qrels, [["ba", "d", "c"]], k=[2], per_query=True)["per_query"]["R-L1@2"] == [0.0]
    with pytest.raises(ValueError, match=r"query 'q' lists 'c' twice \(positions 2 and 4\)"):
        MIPR.evaluate_run(qrels, [["ba", "c", "d", "c"]], k=[5])


def test_sorted_keys_find_agrees_with_searchsorted():
    rng = np.random.default_rng(0)
    clustered = np.concatenate([np.arange(500), rng.integers(0, 2**40, 1000)])  # one crowded bucket
    keys = np.unique(clustered).astype(np.uint64)
    needles = np.concatenate([keys[::3], rng.integers(0, 2**40, 2000).astype(np.uint64), [np.uint64(2**63)]])
    found = LOOKUP.SortedKeys(keys).find(needles)
    at = np.minimum(np.searchsorted(keys, needles), len(keys) - 1)
    assert (found == np.where(keys[at] == needles, at, -1)).all()
    assert (found >= 0).sum() == len(keys[::3])
