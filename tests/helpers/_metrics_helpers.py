"""Random MIPR/M2KR inputs and two references to check the metric modules against: pytrec_eval and plain loops."""

import math
import random

import pytrec_eval

from mmrhub.metrics.m2kr import m2kr_measures as M2KR  # noqa: F401 (for the tests)
from mmrhub.metrics.mipr import mipr_measures as MIPR  # noqa: F401 (for the tests)

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
    qrels = {
        q: {i: GAIN.get(g, 0) for i, g in zip(items, labels)} for q, items, labels in zip(query_ids, judged, grades)
    }
    names = {f"ndcg_cut_{k}", f"recall_{k}", "success_1", f"success_{k}"}
    # relevance_level=2: only L1 counts as relevant for recall and success; ndcg_cut uses the gains.
    return pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=2).evaluate(trec_run(query_ids, rankings))


def plain_mipr(
    judged,
    grades,
    categories,
    ranking,
    k,
    no_l1="zero",
    recall_denominator="judged",
    covered_by="L1",
    category="path",
    ideal="cutoff",
):
    """One query's measures by plain loops, straight from the definitions and readings; None: left out of the mean."""
    gain = {i: GAIN.get(g, 0) for i, g in zip(judged, grades)}
    l1 = {i for i, g in zip(judged, grades) if g == "L1"}
    cat = {i: c if category == "path" else c.split("-")[-1] for i, c in zip(judged, categories)}
    l1_cats = {cat[i] for i in l1}
    top = ranking[:k]
    dcg = sum(gain.get(d, 0) / math.log2(r + 2) for r, d in enumerate(top))
    ideal_gains = sorted(gain.values(), reverse=True)[: k if ideal == "cutoff" else None]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal_gains))
    found = sum(d in l1 for d in top)
    covering = l1 if covered_by == "L1" else set(gain)
    covered = {cat[d] for d in top if d in covering and cat[d] in l1_cats}
    without_l1 = None if no_l1 == "skip" else 0.0
    denominator = len(l1) if recall_denominator == "judged" else min(k, len(l1))
    return {
        "ndcg": dcg / idcg if idcg else 0.0,
        "recall": found / denominator if l1 else without_l1,
        "hit1": float(bool(ranking[:1]) and ranking[0] in l1),
        "hit": float(found > 0),
        "sc": len(covered) / len(l1_cats) if l1_cats else without_l1,
        "multi": len(l1_cats) >= 2,
    }


def plain_mean(values):
    """Mean over the values that are not None; None if there is none."""
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def plain_oracle(judged, grades, categories, ranking, order="baseline", category="path", covered_by="L1"):
    """A pool reordered by gain (stable); "coverage" then takes first, grade by grade, the items that cover an L1
    category (under ``category``) that no item placed before covers (only L1 items cover under ``covered_by="L1"``,
    any judged item under "judged")."""
    gain = {i: GAIN.get(g, 0) for i, g in zip(judged, grades)}
    leaf = (lambda path: path.split("-")[-1]) if category == "leaf" else (lambda path: path)
    cat = {i: leaf(c) for i, c in zip(judged, categories)}
    l1_categories = {cat[i] for i, g in zip(judged, grades) if g == "L1"}
    ordered = sorted(ranking, key=lambda d: -gain.get(d, 0))
    if order == "baseline":
        return ordered
    result, covered = [], set()
    for value in (2, 1, 0):
        group = [d for d in ordered if gain.get(d, 0) == value]
        firsts = []
        for d in group:
            covers = d in cat and (gain[d] == 2 if covered_by == "L1" else True)
            if covers and cat[d] in l1_categories and cat[d] not in covered:
                firsts.append(d)
                covered.add(cat[d])
        result += firsts + [d for d in group if d not in firsts]
    return result


def random_m2kr(seed, queries=80, passages=60):
    rng = random.Random(seed)
    ids = [("A" if n % 2 else "Q") + str(1000 + n) for n in range(passages)]
    query_ids, positives, rankings = [], [], []
    for q in range(queries):
        pos = rng.sample(ids, 1 if q % 3 else rng.randrange(2, 5))
        ranking = list(
            dict.fromkeys(rng.sample(pos, rng.randrange(len(pos) + 1)) + rng.sample(ids, rng.randrange(1, 8)))
        )
        query_ids.append(str(q))
        positives.append(pos)
        rankings.append(rng.sample(ranking, len(ranking)))
    return query_ids, positives, rankings


def plain_m2kr_oracle(positives, ranking):
    return [d for d in ranking if d in positives] + [d for d in ranking if d not in positives]


def plain_m2kr(positives, ranking, k):
    found = len(set(ranking[:k]) & set(positives))
    return {"recall": found / len(positives), "hit": float(found > 0), "strict": float(found == len(positives))}


def pytrec_m2kr(query_ids, positives, rankings, k):
    qrels = {q: {p: 1 for p in pos} for q, pos in zip(query_ids, positives)}
    names = {f"recall_{k}", f"success_{k}"}
    return pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(trec_run(query_ids, rankings))
