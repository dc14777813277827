"""MIPR/M2KR scoring speed against pytrec_eval-terrier, full-scale synthetic data, same in-memory inputs.

Inputs, shared by both sides: the judgments as the builder yields them (Arrow: qrels ``idx`` + ``items``
list<struct<item_id, final_grade>>, corpus ``item_id`` + ``treecate_full_path``) and the run as Python lists
(query ids, ranked ids, scores), as the run reader returns them. Times are medians of 5 repeats.
Usage: python bench/metrics_bench.py
"""

import resource
import statistics
import sys
import time
from pathlib import Path

import evaluate
import pyarrow as pa
import pyarrow.compute as pc
import pytrec_eval

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import metrics_synthetic  # noqa: E402
from mmrhub.metrics.m2kr import m2kr_measures as M2KR  # noqa: E402
from mmrhub.metrics.mipr import mipr_measures as MIPR  # noqa: E402
from mmrhub.truth import prepare_mipr  # noqa: E402

TREC_MEASURES = {"ndcg_cut_10", "recall_10", "success_1", "success_10"}


def median_time(function, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def page_faults(function, repeats=5):
    """Minor page faults per call: memory the allocator gave back to the kernel and takes again."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeats):
        function()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // repeats


def mipr_inputs():
    query_ids, references, rankings, scores = metrics_synthetic.mipr()
    items = pa.array(
        [[{"item_id": i, "final_grade": g} for i, g in zip(r["item_ids"], r["grades"])] for r in references]
    )
    qrels = pa.table({"idx": query_ids, "items": items})
    category = {i: c for r in references for i, c in zip(r["item_ids"], r["categories"])}
    corpus = pa.table({"item_id": list(category), "treecate_full_path": list(category.values())})
    return qrels, corpus, query_ids, references, rankings, scores


def trec_prepare(qrels):
    items = qrels["items"].combine_chunks()
    flat = pc.list_flatten(items)
    ids = pc.struct_field(flat, "item_id").to_pylist()
    grades = pc.struct_field(flat, "final_grade").to_pylist()
    offsets = items.offsets.to_pylist()
    gains = {"L1": 2, "L2": 1}
    judged = {
        qid: {ids[j]: gains.get(grades[j], 0) for j in range(offsets[n], offsets[n + 1])}
        for n, qid in enumerate(qrels["idx"].to_pylist())
    }
    # relevance_level=2: recall and success count L1 only; ndcg_cut uses the gains
    return pytrec_eval.RelevanceEvaluator(judged, TREC_MEASURES, relevance_level=2)


def trec_run(evaluator, query_ids, rankings, scores):
    return evaluator.evaluate({q: dict(zip(r, s)) for q, r, s in zip(query_ids, rankings, scores)})


def bench_mipr():
    qrels, corpus, query_ids, references, rankings, scores = mipr_inputs()
    prepared, evaluator = prepare_mipr(qrels, corpus), trec_prepare(qrels)
    ours, trec = MIPR.evaluate_run(prepared, rankings), trec_run(evaluator, query_ids, rankings, scores)
    mean = statistics.fmean(trec[q]["ndcg_cut_10"] for q in query_ids)
    assert abs(ours["nDCG@10"] - mean) < 1e-9, (ours["nDCG@10"], mean)

    ours_end_to_end = lambda: MIPR.evaluate_run(prepare_mipr(qrels, corpus), rankings)  # noqa: E731
    trec_end_to_end = lambda: trec_run(trec_prepare(qrels), query_ids, rankings, scores)  # noqa: E731
    # Warm-up, both sides: glibc's thresholds for handing memory back to the kernel rise once a large block
    # is freed, so without it whichever side runs first pays page faults the other does not.
    ours_end_to_end(), trec_end_to_end()
    faults = f"page faults per end-to-end run: mmrhub {page_faults(ours_end_to_end)}, pytrec_eval {page_faults(trec_end_to_end)}"
    rows = [
        ("end to end (ingest + 1 run)", median_time(ours_end_to_end), median_time(trec_end_to_end), 10),
        ("each extra run (judgments prepared)",
         median_time(lambda: MIPR.evaluate_run(prepared, rankings), 15),
         median_time(lambda: trec_run(evaluator, query_ids, rankings, scores), 15), 15),
    ]
    # The same runs held as Arrow columns (as a Parquet or datasets run would be): each side ingests them.
    arrow_rankings, arrow_scores = pa.array(rankings), pa.array(scores)
    rows += [
        ("end to end, run as Arrow",
         median_time(lambda: MIPR.evaluate_run(prepare_mipr(qrels, corpus), arrow_rankings)),
         median_time(lambda: trec_run(trec_prepare(qrels), query_ids, arrow_rankings.to_pylist(),
                                      arrow_scores.to_pylist())), 10),
        ("each extra run, run as Arrow",
         median_time(lambda: MIPR.evaluate_run(prepared, arrow_rankings), 15),
         median_time(lambda: trec_run(evaluator, query_ids, arrow_rankings.to_pylist(), arrow_scores.to_pylist()),
                     15), 15),
    ]
    metric = evaluate.load(str(ROOT / "metrics" / "mipr"))
    judged = [r["item_ids"] for r in references]
    grades = [r["grades"] for r in references]
    categories = [r["categories"] for r in references]
    lists_trec = lambda: pytrec_eval.RelevanceEvaluator(  # noqa: E731 - the same Python lists as evaluate gets
        {q: {i: {"L1": 2, "L2": 1}.get(g, 0) for i, g in zip(j, gs)} for q, j, gs in zip(query_ids, judged, grades)},
        TREC_MEASURES, relevance_level=2,
    ).evaluate({q: dict(zip(r, s)) for q, r, s in zip(query_ids, rankings, scores)})
    rows.append(("evaluate.load(...).compute(...) vs pytrec_eval, Python lists in",
                 median_time(lambda: metric.compute(predictions=rankings, references=judged, grades=grades,
                                                    categories=categories)),
                 median_time(lists_trec), 1))
    return rows, faults


def bench_m2kr():
    query_ids, positives, rankings, scores = metrics_synthetic.m2kr()
    answers = pa.array(positives)
    measures_m2kr = {"recall_1", "recall_3", "recall_5"}

    def trec():
        qrels = {q: {p: 1 for p in pos} for q, pos in zip(query_ids, answers.to_pylist())}
        return pytrec_eval.RelevanceEvaluator(qrels, measures_m2kr).evaluate(
            {q: dict(zip(r, s)) for q, r, s in zip(query_ids, rankings, scores)}
        )

    ours = M2KR.evaluate_run(M2KR.Positives(answers, query_ids), rankings)
    assert abs(ours["Recall@5"] - statistics.fmean(v["recall_5"] for v in trec().values())) < 1e-9
    return [("M2KR end to end (Recall@1/3/5)",
             median_time(lambda: M2KR.evaluate_run(M2KR.Positives(answers, query_ids), rankings)),
             median_time(trec), None)]


def main():
    print(f"MIPR: {metrics_synthetic.MIPR_QUERIES} queries x top-{metrics_synthetic.MIPR_DEPTH}, "
          f"{metrics_synthetic.MIPR_JUDGMENTS} judgments; M2KR: {metrics_synthetic.M2KR_QUERIES} queries, "
          f"{metrics_synthetic.M2KR_PASSAGES} passages")
    print("| Case | mmrhub (ms) | pytrec_eval (ms) | speed-up | target |")
    print("|---|---:|---:|---:|---:|")
    mipr_rows, faults = bench_mipr()
    for name, ours, trec, target in mipr_rows + bench_m2kr():
        goal = f">= {target}x" if target else "-"
        print(f"| {name} | {1000 * ours:.1f} | {1000 * trec:.1f} | {trec / ours:.1f}x | {goal} |")
    print(faults)


if __name__ == "__main__":
    main()
