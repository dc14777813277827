"""Full-scale synthetic MIPR and M2KR inputs (same shapes as the real data), generated with a fixed seed."""

import numpy as np

MIPR_QUERIES, MIPR_JUDGMENTS, MIPR_CORPUS, MIPR_DEPTH = 3522, 447809, 30731, 50
M2KR_QUERIES, M2KR_PASSAGES, M2KR_DEPTH = 6415, 47318, 5
GRADES = np.array(["L1", "L2", "N1", "N2", "N3"])


def mipr(seed=0, queries=MIPR_QUERIES, judgments=MIPR_JUDGMENTS, corpus=MIPR_CORPUS, depth=MIPR_DEPTH):
    """-> (query_ids, references as dicts of lists, rankings, scores): distinct, decreasing scores per query."""
    rng = np.random.default_rng(seed)
    item_ids = np.array([f"{i:016x}" for i in rng.choice(2**60, corpus, replace=False)], dtype=object)
    leaves = np.array([f"top{t}-mid{t % 7}-leaf{leaf}" for leaf, t in enumerate(rng.integers(0, 30, 2000))])
    item_category = leaves[rng.integers(0, len(leaves), corpus)]
    sizes = rng.multinomial(judgments - queries, np.full(queries, 1 / queries)) + 1
    query_ids = [str(q + 1) for q in range(queries)]
    references, rankings, scores = [], [], []
    for size in sizes:
        judged = rng.choice(corpus, size, replace=False)
        grades = GRADES[rng.choice(5, size, p=[0.15, 0.2, 0.15, 0.25, 0.25])]
        references.append(
            {
                "item_ids": item_ids[judged].tolist(),
                "grades": grades.tolist(),
                "categories": item_category[judged].tolist(),
            }
        )
        pool = np.unique(np.concatenate([judged[: depth // 2], rng.choice(corpus, depth, replace=False)]))
        ranked = rng.permutation(pool)[: rng.integers(depth - 5, depth + 1)]
        rankings.append(item_ids[ranked].tolist())
        scores.append(np.sort(rng.random(len(ranked)))[::-1].tolist())
    return query_ids, references, rankings, scores


def m2kr(seed=0, queries=M2KR_QUERIES, passages=M2KR_PASSAGES, depth=M2KR_DEPTH):
    """-> (query_ids, positive id lists, rankings, scores); about 1 in 10 queries has several positives."""
    rng = np.random.default_rng(seed)
    passage_ids = np.array([("A" if i % 2 else "Q") + str(i) for i in rng.choice(10**7, passages, replace=False)])
    query_ids = [str(q) for q in range(queries)]
    positives, rankings, scores = [], [], []
    for _ in range(queries):
        count = 1 if rng.random() < 0.9 else int(rng.integers(2, 5))
        pos = rng.choice(passages, count, replace=False)
        candidates = np.unique(
            np.concatenate([pos[: rng.integers(0, count + 1)], rng.choice(passages, depth, replace=False)])
        )
        ranked = rng.permutation(candidates)[:depth]
        positives.append(passage_ids[pos].tolist())
        rankings.append(passage_ids[ranked].tolist())
        scores.append(np.sort(rng.random(len(ranked)))[::-1].tolist())
    return query_ids, positives, rankings, scores
