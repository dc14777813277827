"""A run that lacks judged queries: refused by default, naming --missing-queries; with ``zero`` each such query scores
0 and stays in the means, as trec_eval -c counts it (pytrec_eval with those queries given empty rankings)."""

import json

import pytest
import pytrec_eval
from _mipr_helpers import read_jsonl
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED
from _paths import MIPR_SAMPLE

from mmrhub.cli import main

GAINS = {"L1": 2, "L2": 1}
DROPPED = {"3", "11", "20"}


def without_queries(tmp_path, run_path, dropped=DROPPED):
    entries = json.loads(run_path.read_text())
    path = tmp_path / f"lacking_{run_path.name}"
    path.write_text(json.dumps([entry for entry in entries if entry["qid"] not in dropped]))
    return path, entries


def test_a_run_lacking_queries_is_refused_naming_the_option(tmp_path, capsys):
    path, _ = without_queries(tmp_path, MIPR_EMBEDDING)
    assert main(["evaluate", "mipr", str(path), "--data-dir", str(MIPR_SAMPLE)]) == 1
    err = capsys.readouterr().err
    assert "3 problem(s)" in err and "query '11': missing from the run" in err
    assert err.rstrip().endswith(
        "To score the 3 missing queries as 0 (as trec_eval -c does), pass --missing-queries zero."
    )


def test_zero_scores_missing_queries_as_trec_eval_c(tmp_path, capsys):
    path, entries = without_queries(tmp_path, MIPR_EMBEDDING)
    out = tmp_path / "scores.json"
    argv = ["evaluate", "mipr", str(path), "--data-dir", str(MIPR_SAMPLE), "--missing-queries", "zero", "--json"]
    assert main([*argv, str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        "Judged queries missing from a run, scored 0 (--missing-queries zero): lacking_simulated_embedding_top50 3."
        in printed
    )
    ours = json.loads(out.read_text())["runs"][0]
    judgments = {row["idx"]: row["items"] for row in read_jsonl(MIPR_SAMPLE / "mipr_annotation.jsonl")}
    graded = {qid: {i["item_id"]: GAINS.get(i["final_grade"], 0) for i in items} for qid, items in judgments.items()}
    l1 = {qid: {d: 1 for d, gain in docs.items() if gain == 2} for qid, docs in graded.items()}
    l1 = {qid: docs for qid, docs in l1.items() if docs}
    # Every judged query in the run, those dropped with empty rankings; scores fall with the rank.
    run = {qid: {} for qid in graded}
    run.update(
        {e["qid"]: {r["did"]: -float(i) for i, r in enumerate(e["ranked"])} for e in entries if e["qid"] not in DROPPED}
    )
    ndcg = pytrec_eval.RelevanceEvaluator(graded, {"ndcg_cut.10"}).evaluate(run)
    recall = pytrec_eval.RelevanceEvaluator(l1, {"recall.10", "success.1,10"}).evaluate(run)
    assert len(ndcg) == len(graded) == 27 and len(ours["per_query"]) == 27
    for qid in DROPPED:
        assert all(value == 0 for value in ours["per_query"][qid].values() if value is not None), qid
    for qid, measures in ndcg.items():
        assert ours["per_query"][qid]["nDCG@10"] == pytest.approx(measures["ndcg_cut_10"], abs=1e-12)
    for qid, measures in recall.items():
        assert ours["per_query"][qid]["R-L1@10"] == pytest.approx(measures["recall_10"], abs=1e-12)
        assert ours["per_query"][qid]["Hit-L1@1"] == measures["success_1"]
    mean = sum(m["ndcg_cut_10"] for m in ndcg.values()) / 27
    assert ours["aggregate"]["nDCG@10"] == pytest.approx(mean, abs=1e-12)
    assert sum(ours["per_query"][qid]["nDCG@10"] == 0 for qid in DROPPED) == 3


def test_zero_in_compare_and_oracle_rows(tmp_path, capsys):
    path, _ = without_queries(tmp_path, MIPR_RERANKED)
    argv = ["compare", "mipr", str(MIPR_EMBEDDING), str(path), "--missing-queries", "zero", "--permutations", "200"]
    assert main(argv) == 0
    assert "scored 0 (--missing-queries zero): lacking_simulated_reranker_top50 3." in capsys.readouterr().out
    oracle = ["evaluate", "mipr", str(path), "--oracle", str(path), "--missing-queries", "zero", "--format", "csv"]
    assert main(oracle) == 0
    captured = capsys.readouterr()
    assert "note: Judged queries missing from a run, scored 0" in captured.err
    assert len(captured.out.strip().splitlines()) == 3  # header, the run, the oracle of its pools


def test_oracle_says_how_many_queries_its_baseline_lacks(tmp_path, capsys):
    path, _ = without_queries(tmp_path, MIPR_RERANKED)
    assert main(["oracle", "mipr", str(path), "--missing-queries", "zero"]) == 0
    out = capsys.readouterr().out
    assert out.count("missing from a run") == 1
    assert "_Judged queries missing from a run, scored 0 (--missing-queries zero): Candidate-pool Oracle 3._" in out


def test_zero_for_m2kr(tmp_path, capsys):
    path, entries = without_queries(tmp_path, M2KR_RUN, dropped={json.loads(M2KR_RUN.read_text())[0]["qid"]})
    assert main(["evaluate", "m2kr", str(path), "--per-query", "--missing-queries", "zero"]) == 0
    out = capsys.readouterr().out
    assert "scored 0 (--missing-queries zero): lacking_simulated_top5 1." in out
    row = next(line for line in out.splitlines() if line.startswith(f"| {entries[0]['qid']} |"))
    assert set(row.strip("| ").split(" | ")[1:]) == {"0.00"}


def test_zero_in_report_shows_the_missing_queries_with_no_ranking(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from _report_helpers import Page
    from _report_helpers import run_report

    path, _ = without_queries(tmp_path, MIPR_RERANKED)
    out = tmp_path / "report.html"
    argv = ["mipr", MIPR_EMBEDDING, path, "-o", out, "--missing-queries", "zero", "--query-ids", "3,4"]
    assert run_report(*argv) == 0
    assert "scored 0 (--missing-queries zero): lacking_simulated_reranker_top50 3." in capsys.readouterr().out
    page = Page(out.read_text(encoding="utf-8"))
    assert page.queries == ["3", "4"]
    ranked = [classes for classes in page.figures if "missed" not in classes]
    assert len(ranked) == 10 + 10 + 10  # query 3: the first run's top 10 only; query 4: both runs'
