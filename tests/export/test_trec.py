"""``mmrhub export BENCH OUT --format trec``: qrels files that trec_eval (pytrec_eval) scores exactly as we do."""

import json
from pathlib import Path

import pytest
import pytrec_eval
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth
from mmrhub.scoring.score import score_runs

MIPR_RUN = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
M2KR_RUN = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"


def read_qrels(path: Path) -> dict:
    qrels = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, zero, did, relevance = line.split(" ")
        assert zero == "0"
        qrels.setdefault(qid, {})[did] = int(relevance)
    return qrels


def trec_run(path: Path) -> dict:
    """The official JSON run as trec_eval's dict, scores falling with the rank so trec_eval keeps the list order."""
    return {e["qid"]: {r["did"]: float(-i) for i, r in enumerate(e["ranked"])} for e in json.loads(path.read_text())}


def per_query(benchmark, run: Path) -> dict:
    request = ScoringRequest(BENCHMARKS[benchmark], runs=(str(run),), measure_options={"k": (1, 5, 10)})
    values = score_runs(request, load_truth(request))[0].result["per_query"]
    return {name: dict(zip(values["query_id"], column)) for name, column in values.items() if name != "query_id"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    def export(benchmark):
        out = tmp_path_factory.mktemp("trec") / benchmark
        assert main(["export", benchmark, str(out), "--format", "trec", "--no-check-images"]) == 0
        return out

    return export


def test_mipr_qrels_hold_the_metric_gains(exported):
    out = exported("mipr")
    assert sorted(p.name for p in out.iterdir()) == [".mmrhub-export", "README.md", "qrels-l1.txt", "qrels.txt"]
    qrels, l1 = read_qrels(out / "qrels.txt"), read_qrels(out / "qrels-l1.txt")
    assert sum(map(len, qrels.values())) == 263 and sum(map(len, l1.values())) == 74
    assert {g for docs in qrels.values() for g in docs.values()} == {0, 1, 2}
    assert all(g == 2 for docs in l1.values() for g in docs.values())
    assert "`qrels-l1.txt`: 74 judgments" in (out / "README.md").read_text(encoding="utf-8")


def test_trec_eval_scores_the_mipr_qrels_as_we_do(exported):
    out = exported("mipr")
    ours = per_query("mipr", MIPR_RUN)
    run = trec_run(MIPR_RUN)
    graded = pytrec_eval.RelevanceEvaluator(read_qrels(out / "qrels.txt"), {"ndcg_cut.10"}).evaluate(run)
    l1 = pytrec_eval.RelevanceEvaluator(read_qrels(out / "qrels-l1.txt"), {"recall.10", "success.1,10"}).evaluate(run)
    assert len(graded) == 27 and len(l1) == 26  # trec_eval leaves out the query without an L1 judgment
    for qid, measures in graded.items():
        assert measures["ndcg_cut_10"] == pytest.approx(ours["nDCG@10"][qid], abs=1e-12)
    for qid, measures in l1.items():
        assert measures["recall_10"] == pytest.approx(ours["R-L1@10"][qid], abs=1e-12)
        assert measures["success_1"] == ours["Hit-L1@1"][qid] and measures["success_10"] == ours["Hit-L1@10"][qid]


def test_trec_eval_scores_the_m2kr_qrels_as_we_do(exported):
    out = exported("m2kr")
    qrels = read_qrels(out / "qrels.txt")
    assert len(qrels) == 30 and {g for docs in qrels.values() for g in docs.values()} == {1}
    ours = per_query("m2kr", M2KR_RUN)
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"recall.1,5"}).evaluate(trec_run(M2KR_RUN))
    for qid, measures in scores.items():
        assert measures["recall_1"] == pytest.approx(ours["Recall@1"][qid], abs=1e-12)
        assert measures["recall_5"] == pytest.approx(ours["Recall@5"][qid], abs=1e-12)
