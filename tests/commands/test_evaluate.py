"""mmrhub evaluate / oracle / compare on the bundled samples, checked against plain loops over the raw files."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli
from _metrics_helpers import plain_m2kr
from _metrics_helpers import plain_mipr
from _mipr_helpers import read_jsonl
from _paths import ROOT

from mmrhub.cli import main

MIPR_DIR = ROOT / "data" / "mipr"
EMBEDDING = MIPR_DIR / "baseline" / "simulated_embedding_top50.json"
RERANKER = MIPR_DIR / "baseline" / "simulated_reranker_top50.json"
M2KR_RUN = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"


def mipr_plain(run_path, k=10):
    category = {row["item_id"]: row["treecate_full_path"] for row in read_jsonl(MIPR_DIR / "mipr_corpus.jsonl")}
    qrels = {row["idx"]: row["items"] for row in read_jsonl(MIPR_DIR / "mipr_annotation.jsonl")}
    run = {entry["qid"]: [d["did"] for d in entry["ranked"]] for entry in json.loads(Path(run_path).read_text())}
    rows = {}
    for qid, items in qrels.items():
        ids = [i["item_id"] for i in items]
        rows[qid] = plain_mipr(ids, [i["final_grade"] for i in items], [category[i] for i in ids], run[qid], k)
    return rows


def table_values(text):
    """The first Markdown table: {column: value}."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    return dict(zip(header, cells))


def test_evaluate_mipr_prints_the_published_table(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "evaluate", "mipr", str(EMBEDDING), "--json", str(tmp_path / "scores.json"))
    assert code == 0
    values = table_values(out)
    plain = mipr_plain(EMBEDDING)
    assert values["System"] == "simulated_embedding_top50"
    expected = {
        "nDCG@10": np.mean([p["ndcg"] for p in plain.values()]),
        "R-L1@10": np.mean([p["recall"] for p in plain.values()]),
        "Hit-L1@1": np.mean([p["hit1"] for p in plain.values()]),
        "Hit-L1@10": np.mean([p["hit"] for p in plain.values()]),
        "SC-R-L1@10": np.mean([p["sc"] for p in plain.values()]),
        "SC-R-L1@10*": np.mean([p["sc"] for p in plain.values() if p["multi"]]),
    }
    assert list(values)[1:] == list(expected)
    for name, value in expected.items():
        assert values[name] == f"{100 * value:.2f}"
    saved = json.loads((tmp_path / "scores.json").read_text())
    assert saved["sample"] is True and saved["benchmark"] == "mipr"
    [run] = saved["runs"]
    assert run["name"] == "simulated_embedding_top50" and run["run"] == str(EMBEDDING)
    assert run["aggregate"]["nDCG@10"] == pytest.approx(expected["nDCG@10"])
    assert run["aggregate"]["num_queries"] == len(plain) == 27
    assert set(run["per_query"]) == set(plain)
    for qid, row in plain.items():
        assert run["per_query"][qid]["SC-R-L1@10"] == pytest.approx(row["sc"])
    assert "_Bundled MIPR sample (27 queries), not the benchmark" in out


def test_trec_run_scores_like_the_json_run(capsys, tmp_path):
    entries = json.loads(EMBEDDING.read_text())
    lines = [f"{e['qid']} Q0 {d['did']} {r} {d['score']} test" for e in entries for r, d in enumerate(e["ranked"], 1)]
    trec = tmp_path / "embedding.trec"
    trec.write_text("\n".join(reversed(lines)) + "\n")  # ordered by score, not by the file
    _, json_out, _ = run_cli(capsys, "evaluate", "mipr", str(EMBEDDING), "--k", "5,10")
    _, trec_out, _ = run_cli(capsys, "evaluate", "mipr", str(trec), "--k", "5,10")
    assert table_values(json_out) | {"System": ""} == table_values(trec_out) | {"System": ""}


def test_every_violation_is_named(capsys, tmp_path):
    entries = json.loads(EMBEDDING.read_text())
    entries[0]["ranked"][3]["did"] = "not-a-product"
    entries[1]["ranked"][4]["did"] = entries[1]["ranked"][0]["did"]
    entries[2]["ranked"][2]["score"] = float("nan")
    entries[3]["ranked"][1]["score"] = "high"
    entries.append(dict(entries[5]))
    missing = entries.pop(6)["qid"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(entries))
    code, out, err = run_cli(capsys, "evaluate", "mipr", str(bad))
    assert code == 1 and out == ""
    q = [e["qid"] for e in entries]
    assert f"{bad} does not fit the benchmark: 6 problem(s):" in err
    assert f"query {q[0]!r} position 4 (entry 1): 'not-a-product' is not in the corpus" in err
    assert f"query {q[1]!r} position 5 (entry 2): {entries[1]['ranked'][0]['did']!r} already at position 1" in err
    assert f"query {q[2]!r} position 3 (entry 3): score nan is not a finite number" in err
    assert f"query {q[3]!r} position 2 (entry 4): score 'high' is not a finite number" in err
    assert f"query {q[-1]!r} (entry {len(entries)}): appears again (first at entry 6)" in err
    assert f"query {missing!r}: missing from the run" in err


def test_trec_format_errors_name_the_line(capsys, tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 abc 1 0.5 tag\n1 Q0 def 2 0.4\n")
    code, _, err = run_cli(capsys, "evaluate", "mipr", str(bad))
    assert code == 1
    assert f"{bad}: line 2: expected 6 fields 'qid Q0 docid rank score tag', got 5" in err


def test_rerank_checks_the_candidate_pool(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "evaluate", "mipr", str(RERANKER), "--rerank", str(EMBEDDING))
    assert code == 0 and "simulated_reranker_top50" in out
    entries = json.loads(RERANKER.read_text())
    dropped = entries[0]["ranked"].pop()["did"]
    shrunk = tmp_path / "shrunk.json"
    shrunk.write_text(json.dumps(entries))
    code, _, err = run_cli(capsys, "evaluate", "mipr", str(shrunk), "--rerank", str(EMBEDDING))
    assert code == 1
    assert f"is not a reranking of {EMBEDDING}: 1 problem(s)" in err
    assert f"query {entries[0]['qid']!r} (entry 1): 1 id(s) of the baseline pool missing, e.g. {dropped!r}" in err


def test_oracle_puts_an_l1_first_wherever_the_pool_has_one(capsys):
    code, out, _ = run_cli(capsys, "oracle", "mipr", str(EMBEDDING))
    assert code == 0
    values = table_values(out)
    assert values["System"] == "Candidate-pool Oracle"
    pool_has_l1 = [p["hit"] for p in mipr_plain(EMBEDDING, k=50).values()]
    assert values["Hit-L1@1"] == values["Hit-L1@10"] == f"{100 * np.mean(pool_has_l1):.2f}"
    baseline = table_values(run_cli(capsys, "evaluate", "mipr", str(EMBEDDING))[1])
    assert float(values["nDCG@10"]) > float(baseline["nDCG@10"])


def test_compare_identical_and_different_runs(capsys):
    code, out, _ = run_cli(capsys, "compare", "mipr", str(EMBEDDING), str(EMBEDDING), "--permutations", "200")
    assert code == 0
    assert "| nDCG@10 |" in out and "| +0.00 | 1.0000 |" in out
    code, out, _ = run_cli(capsys, "compare", "mipr", str(EMBEDDING), str(RERANKER), "--permutations", "2000")
    row = next(line for line in out.splitlines() if line.startswith("| nDCG@10 |"))
    a, b, delta, p = [cell.strip() for cell in row.strip("|").split("|")[1:]]
    assert float(delta) == pytest.approx(float(b) - float(a), abs=0.011)
    assert 0 < float(p) < 0.05


def test_m2kr_json_and_kaggle_csv_agree(capsys, tmp_path):
    entries = json.loads(M2KR_RUN.read_text())
    answers = {row["question_id"]: row["pos_item_ids"] for row in _m2kr_answers()}
    plain = [plain_m2kr(answers[e["qid"]], [d["did"] for d in e["ranked"]], 1)["recall"] for e in entries]
    rows = ["question_id,passage_id"]
    for e in entries:  # the Kaggle form strips the A of numeric ids
        ids = [d["did"][1:] if d["did"].startswith("A") and d["did"][1:].isdigit() else d["did"] for d in e["ranked"]]
        rows.append(f'{e["qid"]},"{json.dumps(ids).replace(chr(34), chr(34) * 2)}"')
    csv_path = tmp_path / "submission.csv"
    csv_path.write_text("\n".join(rows) + "\n")
    _, json_out, _ = run_cli(capsys, "evaluate", "m2kr", str(M2KR_RUN))
    code, csv_out, err = run_cli(capsys, "evaluate", "m2kr", str(csv_path), "--by-task")
    assert code == 0, err
    values = table_values(json_out)
    assert list(values) == ["System", "Recall@1", "Recall@3", "Recall@5", "Recall-mean"]
    assert values["Recall@1"] == f"{100 * np.mean(plain):.2f}"
    assert table_values(csv_out) | {"System": ""} == values | {"System": ""}
    assert "| Task |" in csv_out


def test_m2kr_sample_run_tells_the_recall_variants_apart(capsys):
    # Multi-positive queries that find part of their set: hit rate > recall > strict recall.
    code, out, err = run_cli(capsys, "evaluate", "m2kr", str(M2KR_RUN), "--variants", "recall,hit,strict")
    assert code == 0, err
    values = {name: float(value) for name, value in table_values(out).items() if name != "System"}
    answers = {row["question_id"]: row["pos_item_ids"] for row in _m2kr_answers()}
    entries = json.loads(M2KR_RUN.read_text())
    plain = [plain_m2kr(answers[e["qid"]], [d["did"] for d in e["ranked"]], 5) for e in entries]
    assert values["Recall@5"] == float(f"{100 * np.mean([p['recall'] for p in plain]):.2f}")
    assert values["Hit@5"] > values["Recall@5"] > values["StrictRecall@5"] > 0


def test_m2kr_variants_name_the_measures_shown(capsys):
    # As the metric's docstring says: variants lists the measures computed, "recall" by default; it adds nothing.
    code, out, err = run_cli(capsys, "evaluate", "m2kr", str(M2KR_RUN), "--variants", "hit,strict")
    assert code == 0, err
    header = [line for line in out.splitlines() if line.startswith("| System")][0]
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    assert columns == [
        "System", "Hit@1", "Hit@3", "Hit@5", "Hit-mean", "StrictRecall@1", "StrictRecall@3", "StrictRecall@5",
        "StrictRecall-mean",
    ]  # fmt: skip


def _m2kr_answers():
    import pyarrow.parquet as pq

    return pq.read_table(ROOT / "data" / "m2kr" / "challenge_answers" / "train-00000-of-00001.parquet").to_pylist()


@pytest.mark.skipif(
    not os.environ.get("MMRHUB_MIPR_DATA_DIR"), reason="set MMRHUB_MIPR_DATA_DIR to the official MIPR data/"
)
def test_official_data_reproduces_the_published_table(capsys):
    """The MIPR paper's 18 numbers and 2,664 multi-category queries from the official data and its bundled runs,
    under some reading of the open rules."""
    code = main(["reproduce", "mipr", "--data-dir", os.environ["MMRHUB_MIPR_DATA_DIR"]])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out


@pytest.mark.parametrize(
    "reading",
    [{}, {"no_l1": "skip", "recall_denominator": "capped", "covered_by": "judged", "category": "leaf", "ideal": "all"}],
)
def test_cached_tables_score_like_plain_loops_over_the_files(tmp_path, monkeypatch, reading):
    # The cache keeps the judgments coded against the corpus and reordered within each query: the first call (read
    # and cache) and the second (from the cache) must both give what plain loops over the raw files give.
    from mmrhub.benchmarks import MIPR
    from mmrhub.scoring.request import ScoringRequest
    from mmrhub.scoring.score import read_valid_run
    from mmrhub.scoring.score import score

    monkeypatch.setenv("HF_HOME", str(tmp_path))
    results = []
    for _ in range(2):
        truth = MIPR.read_truth(MIPR_DIR)
        results.append(
            score(
                MIPR,
                truth,
                read_valid_run(ScoringRequest(MIPR, str(MIPR_DIR)), truth, RERANKER)[1],
                {"k": (10,), **reading},
            )
        )
    assert len(list((tmp_path / "mmrhub" / "truth").iterdir())) == 1 and results[0] == results[1]
    category = {row["item_id"]: row["treecate_full_path"] for row in read_jsonl(MIPR_DIR / "mipr_corpus.jsonl")}
    run = {entry["qid"]: [d["did"] for d in entry["ranked"]] for entry in json.loads(RERANKER.read_text())}
    per_query = results[1]["per_query"]
    for row in read_jsonl(MIPR_DIR / "mipr_annotation.jsonl"):
        ids = [i["item_id"] for i in row["items"]]
        grades = [i["final_grade"] for i in row["items"]]
        plain = plain_mipr(ids, grades, [category[i] for i in ids], run[row["idx"]], 10, **reading)
        at = per_query["query_id"].index(row["idx"])
        assert per_query["nDCG@10"][at] == pytest.approx(plain["ndcg"])
        assert per_query["R-L1@10"][at] == pytest.approx(plain["recall"])
        assert per_query["SC-R-L1@10"][at] == pytest.approx(plain["sc"])
