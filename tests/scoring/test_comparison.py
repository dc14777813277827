"""mmrhub compare for any number of runs: the randomisation test against exhaustive enumeration and against the
former one-measure-at-a-time code, the corrections on hand-computed lists, the CLI's tables, footnotes, errors
and --json, and (when ranx is installed) ranx's Fisher test on the same per-query values."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from _cli import md_tables
from _cli import run_cli
from _paths import ROOT

from mmrhub.scoring.compare.comparison import compare_runs
from mmrhub.scoring.compare.comparison import index_pairs
from mmrhub.scoring.compare.corrections import adjust
from mmrhub.scoring.compare.corrections import holm
from mmrhub.scoring.compare.significance import pairs_tests
from mmrhub.scoring.compare.significance import randomisation_ps
from mmrhub.scoring.output.captions import footnote
from mmrhub.scoring.output.tables import pair_rows
from mmrhub.scoring.score import Scored

EMBEDDING = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
RERANKER = ROOT / "data" / "mipr" / "baseline" / "simulated_reranker_top50.json"
M2KR_RUN = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"


def former_p(a, b, permutations=10000, seed=0, chunk=1000):
    """The test as it was before one sign matrix served every measure: one measure, its own draws."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    observed = abs(diff.mean())
    if not diff.any():
        return 1.0
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        signs = rng.integers(0, 2, size=(size, len(diff)), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ diff) / len(diff)
        hits += int((means >= observed - 1e-12).sum())
    return (hits + 1) / (permutations + 1)


def exact_p(diff) -> float:
    """The randomisation test's exact p: the share of all 2^n sign vectors whose |mean| reaches the observed one."""
    diff = np.asarray(diff, dtype=float)
    observed = abs(diff.mean())
    flips = [abs(np.dot(signs, diff)) / len(diff) for signs in itertools.product((-1, 1), repeat=len(diff))]
    return float(np.mean(np.array(flips) >= observed - 1e-12))


def perturbed_run(tmp_path) -> Path:
    """A third valid MIPR run: the embedding run with every other query's top two swapped (scores kept in order)."""
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries[::2]:
        first, second = entry["ranked"][:2]
        first["did"], second["did"] = second["did"], first["did"]
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(entries))
    return path


def scored(name, per_query: dict, aggregate: dict = None) -> Scored:
    """A scored row from per-query columns; aggregate means computed unless given."""
    means = {m: float(np.mean([v for v in values if v is not None])) for m, values in per_query.items()}
    result = {**means, **(aggregate or {}), "per_query": {"query_id": [f"q{i}" for i in range(8)], **per_query}}
    return Scored(name, None, result)


# the test itself


@pytest.mark.parametrize(
    "diff",
    [
        [1, 1, 1],
        [1, 1, 1, 1],
        [0.5, -0.25, 0.75, 1, 0, 0.25, -0.5, 1],
        [0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.1, 0.2, 0.9, 0.3],
    ],
)
def test_randomisation_p_matches_the_exhaustive_enumeration(diff):
    if len(diff) == 3:
        assert exact_p(diff) == 2 / 8  # only all-plus and all-minus reach |mean| = 1
    (p,) = randomisation_ps([np.array(diff, dtype=float)], permutations=200000, seed=3)
    assert p == pytest.approx(exact_p(diff), abs=0.005)


def test_one_sign_matrix_gives_each_column_its_own_test():
    rng = np.random.default_rng(1)
    diffs = rng.normal(0.1, 1, size=(40, 3))
    diffs[:, 2] = 0  # a measure on which the runs agree: p = 1, and the others are unaffected
    ps = randomisation_ps(list(diffs.T), permutations=2500, seed=5)
    assert ps == [former_p(np.zeros(40), diffs[:, i], 2500, 5) for i in range(3)]
    assert ps[2] == 1.0


def test_pair_tests_equal_the_former_code_measure_by_measure_even_where_queries_are_missing():
    rng = np.random.default_rng(2)
    a = {m: list(rng.random(8)) for m in ("x", "y", "z")}
    b = {m: list(rng.random(8)) for m in ("x", "y", "z")}
    a["y"][1] = b["y"][5] = None  # y: defined on 6 queries
    b["z"][0] = None  # z: on 7 others
    (tests,) = pairs_tests([(a, b)], ["x", "y", "z"], permutations=3000, seed=9)
    for measure, (_, _, _, p, queries) in tests.items():
        both = [(x, y) for x, y in zip(a[measure], b[measure]) if x is not None and y is not None]
        assert queries == len(both)
        assert p == former_p(*zip(*both), 3000, 9)
    assert [tests[m][4] for m in "xyz"] == [8, 6, 7]


def test_compare_gives_the_former_p_values_on_the_bundled_runs(capsys, tmp_path):
    code, out, err = run_cli(
        capsys,
        "compare",
        "mipr",
        EMBEDDING,
        RERANKER,
        "--permutations",
        "2500",
        "--seed",
        "4",
        "--json",
        tmp_path / "out.json",
    )
    assert code == 0, err
    pair = json.loads((tmp_path / "out.json").read_text())["pairs"][0]
    assert run_cli(capsys, "evaluate", "mipr", EMBEDDING, RERANKER, "--json", tmp_path / "scores.json")[0] == 0
    runs = json.loads((tmp_path / "scores.json").read_text())["runs"]
    for test in pair["measures"]:
        values = [
            (runs[0]["per_query"][q][test["measure"]], runs[1]["per_query"][q][test["measure"]])
            for q in runs[0]["per_query"]
        ]
        both = [(x, y) for x, y in values if x is not None and y is not None]
        assert test["queries"] == len(both)
        assert test["p"] == test["p_corrected"] == former_p(*zip(*both), 2500, 4)


# the corrections


def test_holm_on_hand_computed_lists():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([0.2]) == [0.2]


def test_corrections_leave_untested_measures_out_of_the_family():
    assert adjust([None, 0.02, 0.01], "holm") == pytest.approx([None, 0.02, 0.02])
    assert adjust([0.01, 0.3, None], "bonferroni") == pytest.approx([0.02, 0.6, None])
    assert adjust([0.01, 0.7], "bonferroni") == [0.02, 1.0]
    assert adjust([0.01, None], "none") == [0.01, None]
    with pytest.raises(ValueError, match="unknown correction 'sidak'"):
        adjust([0.1], "sidak")


def test_the_family_is_one_measure_across_the_pairs():
    rng = np.random.default_rng(0)
    base = rng.random((2, 8))
    rows = [scored(f"r{i}", {"m": list(base[0] + i / 4), "n": list(base[1] - i / 8)}) for i in range(3)]
    comparison = compare_runs(rows, 2000, 0)
    assert [(pair.a, pair.b) for pair in comparison.pairs] == [("r0", "r1"), ("r0", "r2"), ("r1", "r2")]
    for index in range(2):
        raw = [pair.tests[index].p for pair in comparison.pairs]
        assert [pair.tests[index].corrected for pair in comparison.pairs] == holm(raw)
    baseline = compare_runs(rows, 2000, 0, "bonferroni", baseline=True)
    assert [(pair.a, pair.b) for pair in baseline.pairs] == [("r0", "r1"), ("r0", "r2")]
    assert [pair.tests[0].corrected for pair in baseline.pairs] == [min(1, 2 * p.tests[0].p) for p in baseline.pairs]


def test_an_earlier_comparison_s_pairs_are_kept_and_the_correction_is_the_whole_family_s(monkeypatch):
    """A board compares its entries once; an upload adds pairs of its own: the earlier pairs are not tested again,
    and the comparison equals the one made from scratch (each raw p depends only on its pair, seed and length)."""
    rng = np.random.default_rng(1)
    base = rng.random((2, 8))
    rows = [scored(f"r{i}", {"m": list(base[0] + i / 5), "n": list(base[1] - i / 9)}) for i in range(4)]
    whole = compare_runs(rows, 3000, 7)
    earlier = compare_runs(rows[:3], 3000, 7)
    import mmrhub.scoring.compare.comparison as comparison

    tested = []
    monkeypatch.setattr(
        comparison, "pairs_tests", lambda pairs, *rest: tested.append(len(pairs)) or pairs_tests(pairs, *rest)
    )
    assert compare_runs(rows, 3000, 7, earlier=earlier) == whole
    assert tested == [3]  # r0-r3, r1-r3, r2-r3: the three new pairs, in one draw
    with pytest.raises(ValueError, match="drew 3000 sign flips with seed 7, not 3000 with seed 8"):
        compare_runs(rows, 3000, 8, earlier=earlier)


def test_pairs():
    assert index_pairs(4, baseline=False) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert index_pairs(4, baseline=True) == [(0, 1), (0, 2), (0, 3)]


def test_a_measure_without_per_query_values_is_shown_untested_and_said_so():
    rng = np.random.default_rng(0)
    rows = [scored(f"r{i}", {"m": list(rng.random(8))}, {"m*": 0.5 + i / 10}) for i in range(2)]
    comparison = compare_runs(rows, 500, 0)
    assert pair_rows(comparison, comparison.pairs[0])[2] == ["m*", "50.00", "60.00", "+10.00", "-"]
    assert "m* has no per-query form and is not tested." in footnote(comparison)


# the command


def test_three_runs_every_pair_holm_corrected(capsys, tmp_path):
    third = perturbed_run(tmp_path)
    out_json = tmp_path / "three.json"
    code, out, err = run_cli(
        capsys, "compare", "mipr", EMBEDDING, RERANKER, third, "--permutations", "2000", "--json", out_json
    )
    assert code == 0, err
    found = md_tables(out)[1:]  # after the summary, a table per pair
    names = ("simulated_embedding_top50", "simulated_reranker_top50", "swapped")
    assert [table[0] for table in found] == [
        ["Measure", a, b, "B - A", "p", "p (holm)"] for a, b in [names[:2], names[::2], names[1:]]
    ]
    assert "p (holm): Holm-adjusted per measure across the 3 pairs (each measure's 3 tests corrected together)." in out
    payload = json.loads(out_json.read_text())
    assert (payload["correction"], payload["family_size"], payload["baseline"]) == ("holm", 3, None)
    assert payload["family"].startswith("per measure")
    assert [run["name"] for run in payload["runs"]] == list(names)
    for index, measure in enumerate(row[0] for row in found[0][1:]):
        tests = [pair["measures"][index] for pair in payload["pairs"]]
        assert {test["measure"] for test in tests} == {measure}
        assert [t["p_corrected"] for t in tests] == pytest.approx(holm([t["p"] for t in tests]))
        assert [row[index + 1][5] for row in found] == [f"{t['p_corrected']:.4f}" for t in tests]
    _, two, _ = run_cli(capsys, "compare", "mipr", EMBEDDING, RERANKER, "--permutations", "2000")
    assert [row[:5] for row in found[0]] == md_tables(two)[0]  # the raw p of a pair does not depend on the others


def test_baseline_compares_each_run_with_it_once(capsys, tmp_path):
    third = perturbed_run(tmp_path)
    code, out, err = run_cli(
        capsys,
        "compare",
        "mipr",
        EMBEDDING,
        RERANKER,
        third,
        "--baseline",
        RERANKER,
        "--correction",
        "bonferroni",
        "--permutations",
        "500",
    )
    assert code == 0, err
    heads = [table[0][:3] for table in md_tables(out)[1:]]
    assert heads == [
        ["Measure", "simulated_reranker_top50", "simulated_embedding_top50"],
        ["Measure", "simulated_reranker_top50", "swapped"],
    ]
    assert "p (bonferroni): Bonferroni-adjusted per measure across the 2 pairs" in out
    code, out, _ = run_cli(capsys, "compare", "mipr", third, "--baseline", EMBEDDING, "--correction", "none")
    assert code == 0 and len(md_tables(out)) == 1 and "One pair: nothing to correct." in out


def test_correction_none_has_no_corrected_column(capsys, tmp_path):
    third = perturbed_run(tmp_path)
    code, out, _ = run_cli(
        capsys, "compare", "mipr", EMBEDDING, RERANKER, third, "--correction", "none", "--permutations", "200"
    )
    assert code == 0 and all(len(table[0]) == 5 for table in md_tables(out)[1:])
    assert "p is not corrected for the 3 pairs." in out
    assert "; >a after a value: above run a's, p < 0.05 in the pair's table below._" in out


SUMMARY = [
    ["System", "nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10", "SC-R-L1@10", "SC-R-L1@10*"],
    ["simulated_embedding_top50 (a)", "59.89", "63.40", "59.26", "88.89", "69.14", "66.67"],
    ["simulated_reranker_top50 (b)", "92.25 >a,c", "91.36 >a,c", "85.19", "96.30", "94.44 >a,c", "97.37 >a,c"],
    ["swapped (c)", "59.18", "63.40", "66.67", "88.89", "69.14", "66.67"],
]


def test_three_runs_open_with_one_summary_table(capsys, tmp_path):
    third, out_json = perturbed_run(tmp_path), tmp_path / "three.json"
    argv = ["compare", "mipr", EMBEDDING, RERANKER, third, "--permutations", "2000"]
    code, out, err = run_cli(capsys, *argv, "--json", out_json)
    assert code == 0, err
    assert out.startswith("| System | nDCG@10 |") and md_tables(out)[0] == SUMMARY
    assert out.splitlines()[6] == (
        "_Each run's means x100, as mmrhub evaluate prints them; >a after a value: above run a's, p (holm) < 0.05 "
        "in the pair's table below._"
    )
    # the means are evaluate's, the markers the corrected p of each pair's test
    evaluated = md_tables(run_cli(capsys, "evaluate", "mipr", EMBEDDING, RERANKER, third)[1])[0]
    assert [row[1:] for row in evaluated[1:]] == [[value.split(" ")[0] for value in row[1:]] for row in SUMMARY[1:]]
    labels = {"simulated_embedding_top50": "a", "simulated_reranker_top50": "b", "swapped": "c"}
    above = {}
    for pair in json.loads(out_json.read_text())["pairs"]:
        for test in pair["measures"]:
            if test["p_corrected"] < 0.05:
                winner, loser = (pair["b"], pair["a"]) if test["difference"] > 0 else (pair["a"], pair["b"])
                above.setdefault((labels[winner], test["measure"]), []).append(labels[loser])
    marked = {
        (row[0][-2], SUMMARY[0][column]): cell.split(" >")[1].split(",")
        for row in SUMMARY[1:]
        for column, cell in enumerate(row)
        if " >" in cell
    }
    assert marked == above
    code, two, _ = run_cli(capsys, "compare", "mipr", EMBEDDING, RERANKER, "--permutations", "2000")
    assert code == 0 and two.startswith("| Measure |") and len(md_tables(two)) == 1  # one pair: its table is all


def test_runs_sharing_a_name_are_numbered(capsys, tmp_path):
    code, out, err = run_cli(capsys, "compare", "mipr", EMBEDDING, EMBEDDING, "--permutations", "100")
    assert code == 0 and "note: two runs are named 'simulated_embedding_top50'" in err
    assert md_tables(out)[0][0][1:3] == ["simulated_embedding_top50", "simulated_embedding_top50 (2)"]


def test_footnotes_say_only_what_applies_to_the_benchmark(capsys):
    code, mipr, _ = run_cli(capsys, "compare", "mipr", EMBEDDING, RERANKER, "--permutations", "200")
    assert code == 0
    assert "SC-R-L1@10* is tested on the 19 of 27 queries that define it." in mipr
    assert "One pair: nothing to correct." in mipr and "not tested" not in mipr
    code, m2kr, _ = run_cli(capsys, "compare", "m2kr", M2KR_RUN, M2KR_RUN, "--permutations", "200")
    assert code == 0
    assert "SC-R-L1" not in m2kr and "not tested" not in m2kr and "queries that define" not in m2kr
    assert "One pair: nothing to correct." in m2kr


def test_too_few_runs(capsys):
    _, _, err = run_cli(capsys, "compare", "mipr", EMBEDDING)
    assert err == "mmrhub compare: error: compare needs at least two RUNs, or one RUN and --baseline\n"
    _, _, err = run_cli(capsys, "compare", "mipr", EMBEDDING, "--baseline", EMBEDDING)
    assert err == "mmrhub compare: error: compare needs at least a RUN besides --baseline\n"


# ranx, the reference users know


@pytest.mark.slow
def test_ranx_fisher_test_agrees():
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(0)
    queries, docs = [f"q{i}" for i in range(40)], [f"d{i}" for i in range(20)]
    qrels = ranx.Qrels({q: {d: int(rng.integers(1, 3)) for d in rng.choice(docs, 4, replace=False)} for q in queries})
    runs = []
    for name, strength in {"good": 1.0, "fair": 0.7, "weak": 0.4}.items():
        scores = {}
        for q in queries:
            relevant = qrels.to_dict()[q]
            scores[q] = {d: float(rng.normal() + strength * (d in relevant)) for d in docs}
        runs.append(ranx.Run(scores, name=name))
    metrics = ["ndcg@5", "precision@5"]
    report = ranx.compare(qrels, runs, metrics, stat_test="fisher", n_permutations=20000, random_seed=0)
    rows = []
    for run in runs:
        values = ranx.evaluate(qrels, run, metrics, return_mean=False)
        per_query = {"query_id": queries, **{m: [float(v) for v in values[m]] for m in metrics}}
        rows.append(Scored(run.name, None, {m: float(np.mean(values[m])) for m in metrics} | {"per_query": per_query}))
    ours = compare_runs(rows, 20000, 0)
    theirs = {m: [report.comparisons[pair.a, pair.b][m]["p_value"] for pair in ours.pairs] for m in metrics}
    mine = {m: [pair.tests[index].p for pair in ours.pairs] for index, m in enumerate(metrics)}
    # nDCG, continuous: both estimate the same exact p from random draws (standard error below 0.004)
    assert mine["ndcg@5"] == pytest.approx(theirs["ndcg@5"], abs=0.02)
    assert holm(mine["ndcg@5"]) == pytest.approx(holm(theirs["ndcg@5"]), abs=0.05)
    decisions = [[p <= 0.05 for p in holm(found["ndcg@5"])] for found in (mine, theirs)]
    assert decisions == [[False, True, True]] * 2
    # precision, discrete: ranx compares without a tolerance, so rounding loses some exact ties that we count
    assert all(p >= q - 0.02 for p, q in zip(mine["precision@5"], theirs["precision@5"]))
    assert mine["precision@5"][0] > theirs["precision@5"][0] + 0.03
