"""MIPR/M2KR scoring speed against pytrec_eval-terrier: full-scale synthetic data, the same in-memory inputs.

Each row times one step, in this process: the best of 7 calls after one warm-up call of each side (the
minimum, as the least disturbed figure on a shared machine):

- prepare judgments: the metric's ``Qrels`` from Arrow list arrays (item ids, grades, categories per query, as a
  datasets column gives them) against building pytrec_eval's ``RelevanceEvaluator`` from the same arrays;
- each extra run: scoring one run with the judgments prepared (only the top max(k) = 10 ids are read), the
  run as Python lists (as the run reader returns them) or as an Arrow list array, against
  ``RelevanceEvaluator.evaluate`` on the same run (the dict it needs is built from the same input);
- ``evaluate.load(...).compute(...)`` on Python lists against pytrec_eval from the same Python lists;
- M2KR: ``Positives`` + ``evaluate_run`` against pytrec_eval recall_1/3/5.

pytrec_eval computes ndcg_cut_10, recall_10, success_1, success_10; the metric computes all six MIPR measures.
Only the metric modules are used (``metrics/<name>``, importable as ``mmrhub.metrics.<name>``).
Usage: python bench/metrics_bench.py
"""

import statistics
import sys
import time
from pathlib import Path

import evaluate
import pyarrow as pa
import pytrec_eval

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import metrics_synthetic  # noqa: E402

from mmrhub.metrics.m2kr import m2kr_measures as M2KR  # noqa: E402
from mmrhub.metrics.mipr import mipr_measures as MIPR  # noqa: E402

TREC_MEASURES = {"ndcg_cut_10", "recall_10", "success_1", "success_10"}
GAIN = {"L1": 2, "L2": 1}


def best_time(function, repeats=7):
    function()  # warm-up: caches, and glibc's thresholds for handing freed memory back to the kernel
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def trec_evaluator(query_ids, judged, grades):
    """pytrec_eval's judgments; relevance_level=2: recall and success count L1 only, ndcg_cut uses the gains."""
    qrels = {
        q: {i: GAIN.get(g, 0) for i, g in zip(items, labels)} for q, items, labels in zip(query_ids, judged, grades)
    }
    return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=2)


def trec_run(evaluator, query_ids, rankings, scores):
    return evaluator.evaluate({q: dict(zip(r, s)) for q, r, s in zip(query_ids, rankings, scores)})


def bench_mipr():
    query_ids, references, rankings, scores = metrics_synthetic.mipr()
    judged, grades, categories = ([r[key] for r in references] for key in ("item_ids", "grades", "categories"))
    arrow = {
        name: pa.array(values) for name, values in [("judged", judged), ("grades", grades), ("categories", categories)]
    }
    arrow_rankings = pa.array(rankings)

    def prepare():
        return MIPR.Qrels(arrow["judged"], arrow["grades"], arrow["categories"], query_ids=query_ids)

    def trec_prepare():
        return trec_evaluator(query_ids, arrow["judged"].to_pylist(), arrow["grades"].to_pylist())

    qrels, evaluator = prepare(), trec_prepare()
    trec = trec_run(evaluator, query_ids, rankings, scores)
    assert (
        abs(MIPR.evaluate_run(qrels, rankings)["nDCG@10"] - statistics.fmean(trec[q]["ndcg_cut_10"] for q in query_ids))
        < 1e-9
    )
    metric = evaluate.load(str(ROOT / "metrics" / "mipr"))
    return [
        ("prepare judgments (Arrow list arrays)", best_time(prepare), best_time(trec_prepare), None),
        (
            "each extra run, run as Python lists",
            best_time(lambda: MIPR.evaluate_run(qrels, rankings)),
            best_time(lambda: trec_run(evaluator, query_ids, rankings, scores)),
            ">= 2x",
        ),
        (
            "each extra run, run as Arrow",
            best_time(lambda: MIPR.evaluate_run(qrels, arrow_rankings)),
            best_time(lambda: trec_run(evaluator, query_ids, arrow_rankings.to_pylist(), scores)),
            ">= 2x",
        ),
        (
            "evaluate.load(...).compute(...), Python lists in",
            best_time(
                lambda: metric.compute(predictions=rankings, references=judged, grades=grades, categories=categories),
                repeats=3,
            ),
            best_time(
                lambda: trec_run(trec_evaluator(query_ids, judged, grades), query_ids, rankings, scores), repeats=3
            ),
            ">= 0.67x",
        ),
    ]


def bench_m2kr():
    query_ids, positives, rankings, scores = metrics_synthetic.m2kr()
    answers = pa.array(positives)

    def trec():
        qrels = {q: {p: 1 for p in pos} for q, pos in zip(query_ids, answers.to_pylist())}
        return pytrec_eval.RelevanceEvaluator(qrels, {"recall_1", "recall_3", "recall_5"}).evaluate(
            {q: dict(zip(r, s)) for q, r, s in zip(query_ids, rankings, scores)}
        )

    ours = M2KR.evaluate_run(M2KR.Positives(answers, query_ids), rankings)
    assert abs(ours["Recall@5"] - statistics.fmean(v["recall_5"] for v in trec().values())) < 1e-9
    return [
        (
            "M2KR prepare + 1 run (Recall@1/3/5)",
            best_time(lambda: M2KR.evaluate_run(M2KR.Positives(answers, query_ids), rankings)),
            best_time(trec),
            None,
        )
    ]


def main():
    print(
        f"MIPR: {metrics_synthetic.MIPR_QUERIES} queries x top-{metrics_synthetic.MIPR_DEPTH}, "
        f"{metrics_synthetic.MIPR_JUDGMENTS} judgments; M2KR: {metrics_synthetic.M2KR_QUERIES} queries, "
        f"{metrics_synthetic.M2KR_PASSAGES} passages. One step each, in process (see the module docstring)."
    )
    print("| Step | metric module (ms) | pytrec_eval (ms) | speed-up | floor |")
    print("|---|---:|---:|---:|---:|")
    for name, ours, trec, floor in bench_mipr() + bench_m2kr():
        print(f"| {name} | {1000 * ours:.1f} | {1000 * trec:.1f} | {trec / ours:.2f}x | {floor or '-'} |")


if __name__ == "__main__":
    main()
