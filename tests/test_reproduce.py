"""``mmrhub reproduce``: the search over the open metric rules finds exactly the combination behind a table."""

import itertools
import json
import shutil
from pathlib import Path

import pytest

from mmrhub.benchmarks import MIPR
from mmrhub.cli import main

ROOT = Path(__file__).resolve().parents[1]
NON_DEFAULT = {"no_l1": "skip", "recall_denominator": "capped", "covered_by": "judged", "category": "leaf",
               "ideal": "all", "order": "coverage"}
FLAGS = [f"--{name.replace('_', '-')}" for name in NON_DEFAULT]


def jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """The sample, with query 1 judged so that every open rule changes a number of the three rows:
    12 L1 items (so R-L1's capped denominator and an uncut ideal DCG differ), two L1 paths sharing their last
    segment (leaf vs path), an N1 item of an L1 category in the top 10 (covered by judged items), and ten L1
    items of one category ahead of the others in the pool (the oracle's coverage order)."""
    folder = shutil.copytree(MIPR.sample_dir, tmp_path_factory.mktemp("reproduce") / "mipr")
    pots, knives, coats = "家居-厨房-锅具-锅", "家居-厨房-刀具-刀", "服饰-男装-外套-锅"
    new = [(f"a{n:015d}", pots) for n in range(10)] + [("b000000000000000", coats), ("c000000000000000", knives),
                                                        ("d000000000000000", knives)]
    corpus = jsonl(folder / "mipr_corpus.jsonl")
    corpus += [{"item_id": i, "title": "新", "pict_url": f"{i}.jpg", "treecate_full_path": path} for i, path in new]
    write_jsonl(folder / "mipr_corpus.jsonl", corpus)
    qrels = jsonl(folder / "mipr_annotation.jsonl")
    grades = ["L1"] * 12 + ["N1"]
    qrels[0]["items"] = [{"item_id": i, "final_grade": g} for (i, _), g in zip(new, grades)]
    write_jsonl(folder / "mipr_annotation.jsonl", qrels)
    unjudged = [row["item_id"] for row in corpus[:40]]
    first = [i for i, _ in new[:8]] + ["d000000000000000", unjudged[0], new[8][0], new[9][0], new[10][0], new[11][0]]
    for official, sample in (("qwen3_vl_embedding_8b_top50.json", "simulated_embedding_top50.json"),
                             ("qwen3_vl_reranker_8b_top50.json", "simulated_reranker_top50.json")):
        run = json.loads((folder / "baseline" / sample).read_text())
        ranking = first + unjudged[1:37]
        if "reranker" in official:
            ranking = ranking[::-1]
        run[0]["ranked"] = [{"did": did, "score": 1 - r / 100} for r, did in enumerate(ranking)]
        (folder / "baseline" / official).write_text(json.dumps(run), encoding="utf-8")
    return folder


def table(capsys, data_dir, options):
    argv = ["evaluate", "mipr", "--data-dir", str(data_dir), "--json", str(data_dir / "t.json")]
    for name, value in options.items():
        argv += [f"--{name.replace('_', '-')}", value]
    assert main(argv) == 0
    capsys.readouterr()
    runs = json.loads((data_dir / "t.json").read_text())["runs"]
    return [{m: round(100 * v, 2) for m, v in run["aggregate"].items() if isinstance(v, float)} for run in runs]


def test_every_open_rule_changes_the_table(capsys, data_dir):
    default = table(capsys, data_dir, {})
    for name, value in NON_DEFAULT.items():
        assert table(capsys, data_dir, {name: value}) != default, name


def test_the_search_finds_exactly_the_combination_behind_a_table(capsys, data_dir, tmp_path):
    target = tmp_path / "target.json"
    target.write_text(json.dumps(table(capsys, data_dir, NON_DEFAULT)))
    code = main(["reproduce", "mipr", "--data-dir", str(data_dir), "--target", str(target)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "1 of 64 combinations reproduce all 18 numbers of the target table."
    assert out.splitlines()[1].split() == list(itertools.chain(*zip(FLAGS, NON_DEFAULT.values())))


def test_says_plainly_when_no_combination_reproduces_the_seed(capsys, data_dir):
    assert main(["reproduce", "mipr", "--data-dir", str(data_dir)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("0 of 64 combinations reproduce all 18 numbers of the seed table.\nNone does. The closest")
