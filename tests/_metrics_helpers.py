"""Random MIPR/M2KR inputs and two references to check the metric modules against: pytrec_eval and plain loops."""

import math
import random

import pytrec_eval

from mmrhub.metrics.m2kr import m2kr_measures as M2KR
from mmrhub.metrics.mipr import mipr_measures as MIPR

GRADES = ["L1", "L2", "N1", "N2", "N3"]
GAIN = {"L1": 2, "L2": 1}


def random_mipr(seed, queries=60, items=80):
    """Judgments with some queries lacking L1 or having one category, rankings with unjudged items,
    some shorter than 10; scores strictly decreasing so pytrec_eval's score order is the list order."""
    rng = random.Random(seed)
    ids = [f"i{n:03d}" for n in range(items)]
    category = {i: f"top{rng.randrange(3)}-leaf{rng.randrange(6)}" for i in ids}
    query_ids, judged, grades, categories, rankings = [], [], [], [], []
    for q in range(queries):
        chosen = rng.sample(ids, rng.randrange(1, 25))
        weights = [0, 1, 1, 1, 1] if q % 7 == 0 else [3, 2, 1, 1, 2]  # every 7th query has no L1
        labels = rng.choices(GRADES, weights=weights, k=len(chosen))
        query_ids.append(f"q{q}")
        judged.append(chosen)
        grades.append(labels)
        categories.append([category[i] for i in chosen])
        pool = chosen[: rng.randrange(len(chosen) + 1)] + rng.sample(ids, rng.randrange(0, 15))
        ranking = list(dict.fromkeys(rng.sample(pool, len(pool))))
        rankings.append(ranking or [rng.choice(ids)])
    return query_ids, judged, grades, categories, rankings


def trec_run(query_ids, rankings):
    return {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in zip(query_ids, rankings)}


def pytrec_mipr(query_ids, judged, grades, rankings, k):
    """Per-query ndcg_cut_k, recall_k (L1 relevant), success_1, success_k from trec_eval."""
    qrels = {q: {i: GAIN.get(g, 0) for i, g in zip(items, labels)} for q, items, labels in zip(query_ids, judged, grades)}
    names = {f"ndcg_cut_{k}", f"recall_{k}", "success_1", f"success_{k}"}
    # relevance_level=2: only L1 counts as relevant for recall and success; ndcg_cut uses the gains.
    return pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=2).evaluate(trec_run(query_ids, rankings))


def plain_mipr(judged, grades, categories, ranking, k):
    """One query's measures by plain loops, straight from the definitions."""
    gain = {i: GAIN.get(g, 0) for i, g in zip(judged, grades)}
    l1 = {i for i, g in zip(judged, grades) if g == "L1"}
    l1_cats = {c for i, g, c in zip(judged, grades, categories) if g == "L1"}
    cat = dict(zip(judged, categories))
    top = ranking[:k]
    dcg = sum(gain.get(d, 0) / math.log2(r + 2) for r, d in enumerate(top))
    ideal = sorted(gain.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    found = sum(d in l1 for d in top)
    covered = {cat[d] for d in top if d in l1}
    return {
        "ndcg": dcg / idcg if idcg else 0.0,
        "recall": found / len(l1) if l1 else 0.0,
        "capped": found / min(k, len(l1)) if l1 else 0.0,
        "hit1": float(bool(ranking[:1]) and ranking[0] in l1),
        "hit": float(found > 0),
        "sc": len(covered) / len(l1_cats) if l1_cats else 0.0,
        "multi": len(l1_cats) >= 2,
    }


def random_m2kr(seed, queries=80, passages=60):
    rng = random.Random(seed)
    ids = [("A" if n % 2 else "Q") + str(1000 + n) for n in range(passages)]
    query_ids, positives, rankings = [], [], []
    for q in range(queries):
        pos = rng.sample(ids, 1 if q % 3 else rng.randrange(2, 5))
        ranking = list(dict.fromkeys(rng.sample(pos, rng.randrange(len(pos) + 1)) + rng.sample(ids, rng.randrange(1, 8))))
        query_ids.append(str(q))
        positives.append(pos)
        rankings.append(rng.sample(ranking, len(ranking)))
    return query_ids, positives, rankings


def plain_m2kr(positives, ranking, k):
    found = len(set(ranking[:k]) & set(positives))
    return {"recall": found / len(positives), "hit": float(found > 0), "strict": float(found == len(positives))}


def pytrec_m2kr(query_ids, positives, rankings, k):
    qrels = {q: {p: 1 for p in pos} for q, pos in zip(query_ids, positives)}
    names = {f"recall_{k}", f"success_{k}"}
    return pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(trec_run(query_ids, rankings))
