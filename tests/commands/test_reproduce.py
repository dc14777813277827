"""``mmrhub reproduce``: the search over the open metric rules finds exactly the combination behind a table."""

import itertools
import json
import shutil
from dataclasses import replace

import pytest
from _mipr_helpers import read_jsonl
from _mipr_helpers import write_jsonl

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.benchmarks import MIPR
from mmrhub.cli import main
from mmrhub.scoring import score as score_module
from mmrhub.scoring.readings import combinations
from mmrhub.scoring.readings import score_every_reading
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs

NON_DEFAULT = {
    "no_l1": "skip",
    "recall_denominator": "capped",
    "covered_by": "judged",
    "category": "leaf",
    "ideal": "all",
    "order": "coverage",
}
FLAGS = [f"--{name.replace('_', '-')}" for name in NON_DEFAULT]
NON_DEFAULT_FLAGS = " ".join(itertools.chain(*zip(FLAGS, NON_DEFAULT.values())))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """The sample, with query 1 judged so that every open rule changes a number of the three rows:
    12 L1 items (so R-L1's capped denominator and an uncut ideal DCG differ), two L1 paths sharing their last
    segment (leaf vs path), an N1 item of an L1 category in the top 10 (covered by judged items), and ten L1
    items of one category ahead of the others in the pool (the oracle's coverage order)."""
    folder = shutil.copytree(MIPR.sample_dir, tmp_path_factory.mktemp("reproduce") / "mipr")
    pots, knives, coats = "家居-厨房-锅具-锅", "家居-厨房-刀具-刀", "服饰-男装-外套-锅"
    new = [(f"a{n:015d}", pots) for n in range(10)] + [
        ("b000000000000000", coats),
        ("c000000000000000", knives),
        ("d000000000000000", knives),
    ]
    corpus = read_jsonl(folder / "mipr_corpus.jsonl")
    corpus += [{"item_id": i, "title": "新", "pict_url": f"{i}.jpg", "treecate_full_path": path} for i, path in new]
    write_jsonl(folder / "mipr_corpus.jsonl", corpus)
    qrels = read_jsonl(folder / "mipr_annotation.jsonl")
    grades = ["L1"] * 12 + ["N1"]
    qrels[0]["items"] = [{"item_id": i, "final_grade": g} for (i, _), g in zip(new, grades)]
    write_jsonl(folder / "mipr_annotation.jsonl", qrels)
    unjudged = [row["item_id"] for row in corpus[:40]]
    first = [i for i, _ in new[:8]] + ["d000000000000000", unjudged[0], new[8][0], new[9][0], new[10][0], new[11][0]]
    for official, sample in (
        ("qwen3_vl_embedding_8b_top50.json", "simulated_embedding_top50.json"),
        ("qwen3_vl_reranker_8b_top50.json", "simulated_reranker_top50.json"),
    ):
        run = json.loads((folder / "baseline" / sample).read_text())
        ranking = first + unjudged[1:37]
        if "reranker" in official:
            ranking = ranking[::-1]
        run[0]["ranked"] = [{"did": did, "score": 1 - r / 100} for r, did in enumerate(ranking)]
        (folder / "baseline" / official).write_text(json.dumps(run), encoding="utf-8")
    return folder


def evaluated(capsys, data_dir, options, out=None):
    """``mmrhub evaluate``'s rows (its --json aggregates, written to ``out``) under ``options``; no ``data_dir``:
    the bundled sample."""
    out = out or data_dir / "t.json"
    argv = ["evaluate", "mipr", "--json", str(out)] + (["--data-dir", str(data_dir)] if data_dir else [])
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", value]
    assert main(argv) == 0
    capsys.readouterr()
    return [run["aggregate"] for run in json.loads(out.read_text())["runs"]]


def table(capsys, data_dir, options, out=None):
    return [
        {m: round(100 * v, 2) for m, v in row.items() if isinstance(v, float)}
        for row in evaluated(capsys, data_dir, options, out)
    ]


def reproduce(capsys, tmp_path, data_dir, target=None):
    """(exit code, output lines) of ``mmrhub reproduce mipr``, with ``target`` written as its --target file."""
    argv = ["reproduce", "mipr"] + (["--data-dir", str(data_dir)] if data_dir else [])
    if target is not None:
        (tmp_path / "target.json").write_text(json.dumps(target))
        argv += ["--target", str(tmp_path / "target.json")]
    code = main(argv)
    return code, capsys.readouterr().out.splitlines()


def test_every_open_rule_changes_the_table(capsys, data_dir):
    default = table(capsys, data_dir, {})
    for name, value in NON_DEFAULT.items():
        assert table(capsys, data_dir, {name: value}) != default, name


def test_the_search_finds_exactly_the_combination_behind_a_table(capsys, data_dir, tmp_path):
    code, out = reproduce(capsys, tmp_path, data_dir, table(capsys, data_dir, NON_DEFAULT))
    assert code == 0
    assert out == ["1 of 64 combinations reproduce all 18 numbers of the target table.", "  " + NON_DEFAULT_FLAGS]


def test_a_target_may_state_the_multi_category_count(capsys, data_dir, tmp_path):
    count = evaluated(capsys, data_dir, NON_DEFAULT)[0]["num_multi_category_queries"]
    target = {"rows": table(capsys, data_dir, NON_DEFAULT), "num_multi_category_queries": count}
    code, out = reproduce(capsys, tmp_path, data_dir, target)
    assert code == 0
    assert out == ["1 of 64 combinations reproduce all 19 numbers of the target table.", "  " + NON_DEFAULT_FLAGS]


def test_a_count_that_differs_fails_the_otherwise_matching_combination_and_is_named(capsys, data_dir, tmp_path):
    target = {"rows": table(capsys, data_dir, NON_DEFAULT), "num_multi_category_queries": 2664}
    code, out = reproduce(capsys, tmp_path, data_dir, target)
    assert code == 1
    assert out == [
        "None of 64 combinations reproduces all 19 numbers of the target table; the closest matches 18.",
        "  " + NON_DEFAULT_FLAGS,
        "    num_multi_category_queries: ours 19, target 2,664",
    ]


def test_lists_every_tied_closest_combination_and_the_numbers_each_misses(capsys, data_dir, tmp_path):
    # The oracle row's SC-R-L1@10 as the baseline order gives it, the rest as the coverage order does: the two
    # orders tie, each one number off, a different one.
    target = table(capsys, data_dir, NON_DEFAULT)
    target[2]["SC-R-L1@10"] = table(capsys, data_dir, {**NON_DEFAULT, "order": "baseline"})[2]["SC-R-L1@10"]
    code, out = reproduce(capsys, tmp_path, data_dir, target)
    assert code == 1
    assert out == [
        "None of 64 combinations reproduces all 18 numbers of the target table; the 2 closest, tied, match 17.",
        "  " + NON_DEFAULT_FLAGS.replace("--order coverage", "--order baseline"),
        "    Candidate-pool Oracle SC-R-L1@10*: ours 94.74, target 97.37",
        "  " + NON_DEFAULT_FLAGS,
        "    Candidate-pool Oracle SC-R-L1@10: ours 98.08, target 96.15",
    ]


def test_names_the_published_numbers_each_closest_combination_misses(capsys, data_dir, tmp_path):
    code, out = reproduce(capsys, tmp_path, data_dir)
    assert code == 1
    assert out[0] == (
        "None of 64 combinations reproduces all 19 numbers of the MIPR paper's table; the 64 closest, tied, match 0."
    )
    assert (
        out[1] == "  --no-l1 zero --recall-denominator judged --covered-by L1 --category path --ideal cutoff "
        "--order baseline"
    )
    assert out[2] == "    Qwen3-VL-Embedding-8B nDCG@10: ours 60.15, published 49.23"
    assert out[20] == "    num_multi_category_queries: ours 19, published 2,664"
    assert len(out) == 1 + 64 * 20


def test_the_sample_cannot_decide_and_says_so(capsys, tmp_path):
    code, out = reproduce(capsys, tmp_path, None)
    assert code == 0
    assert out == [
        "The bundled sample cannot decide between the interpretations: its runs are simulated, not the runs behind "
        "the MIPR paper's table, so no interpretation can be confirmed or excluded on it. Give --data-dir with the "
        "official data.",
        "For illustration only, on the sample's simulated runs:",
        "  None of 64 combinations reproduces all 19 numbers of the MIPR paper's table; the 64 closest, tied, match 0.",
    ]


def test_on_the_sample_a_target_table_is_searched_as_usual(capsys, tmp_path):
    # The sample's own table: only --no-l1 changes it, so the 32 combinations with no_l1=zero give it.
    code, out = reproduce(capsys, tmp_path, None, table(capsys, None, {}, tmp_path / "t.json"))
    assert code == 0
    assert out[0] == "32 of 64 combinations reproduce all 18 numbers of the target table."
    assert all(line.startswith("  --no-l1 zero ") for line in out[1:]) and len(out) == 33


@pytest.mark.parametrize(
    "target, message",
    [
        ({"rows": [{"nDCG@10": 1.0}] * 3, "queries": 3}, "unknown key 'queries'"),
        ([{"nDCG@10": 1.0}] * 2, "the target table has 2 rows; the runs scored give 3"),
        ([{"nDCG@100": 1.0}] * 3, "the target table: unknown measure 'nDCG@100'"),
        ({"num_multi_category_queries": 3}, "expected a list of rows"),
    ],
)
def test_a_malformed_target_is_refused_in_one_line(capsys, data_dir, tmp_path, target, message):
    (tmp_path / "target.json").write_text(json.dumps(target))
    assert main(["reproduce", "mipr", "--data-dir", str(data_dir), "--target", str(tmp_path / "target.json")]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


def test_reads_each_run_once_and_builds_each_oracle_once(capsys, data_dir, tmp_path, monkeypatch):
    calls = {"read": 0, "oracle": []}

    def counted_read(*args, **kwargs):
        calls["read"] += 1
        return read_valid_run(*args, **kwargs)

    def counted_oracle(*args, **options):
        calls["oracle"].append(options)
        return MIPR.oracle(*args, **options)

    read_valid_run, target = score_module.read_valid_run, table(capsys, data_dir, NON_DEFAULT)
    monkeypatch.setattr(score_module, "read_valid_run", counted_read)
    monkeypatch.setitem(BENCHMARKS, "mipr", replace(MIPR, oracle=counted_oracle))
    reproduce(capsys, tmp_path, data_dir, target)
    assert calls["read"] == 2  # the two shipped runs; the embedding run is also the baseline
    followed = [{"category": c, "covered_by": b} for c in ("path", "leaf") for b in ("L1", "judged")]
    expected = [{**readings, "order": order} for readings in followed for order in ("baseline", "coverage")]
    assert sorted(map(sorted_items, calls["oracle"])) == sorted(map(sorted_items, expected))  # each once


def sorted_items(keywords: dict) -> tuple:
    return tuple(sorted(keywords.items()))


def test_the_search_scores_as_score_runs_does_for_each_combination(data_dir):
    shipped = replace(ScoringRequest(MIPR, str(data_dir)).with_shipped_runs(), breakdown=True)
    truth = load_truth(shipped)
    searched = list(score_every_reading(shipped, truth))
    assert [(measure, oracle) for measure, oracle, _ in searched] == combinations(MIPR)
    for measure_options, oracle_options, rows in searched:
        expected = score_runs(replace(shipped, measure_options=measure_options, oracle_options=oracle_options), truth)
        assert [(row.name, row.result) for row in rows] == [(row.name, row.result) for row in expected]
