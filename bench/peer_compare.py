"""The peer a user would write instead of `mmrhub compare mipr`: json + pytrec_eval + numpy, about 30 lines.

    python bench/peer_compare.py DATA_DIR RUN RUN [RUN ...]

Reads the annotation JSON Lines and each run (official JSON) with `json`, scores nDCG@10 (gains L1=2, L2=1),
recall@10 and success@1/@10 of L1 items per query with pytrec_eval, then for every pair of runs a two-sided
paired randomisation test of each measure (10,000 random sign flips of the per-query differences, one sign matrix
drawn once from seed 0 for every pair, as `mmrhub compare` does; one matrix-vector product per measure and pair),
and prints the p-values.
"""

import itertools
import json
import sys

import numpy as np
import pytrec_eval

GAIN = {"L1": 2, "L2": 1}
MEASURES = ["ndcg_cut_10", "recall_10", "success_1", "success_10"]
data_dir, paths = sys.argv[1], sys.argv[2:]
with open(f"{data_dir}/mipr_annotation.jsonl", encoding="utf-8") as f:
    rows = [json.loads(line) for line in f if line.strip()]
qrels = {row["idx"]: {i["item_id"]: GAIN.get(i["final_grade"], 0) for i in row["items"]} for row in rows}
evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=2)
per_query = []
for path in paths:
    with open(path, encoding="utf-8") as f:
        run = {
            e["qid"]: {d["did"]: float(len(e["ranked"]) - r) for r, d in enumerate(e["ranked"])} for e in json.load(f)
        }
    scores = evaluator.evaluate(run)
    queries = sorted(qrels)
    per_query.append({m: np.array([scores[q][m] if q in scores else 0.0 for q in queries]) for m in MEASURES})
signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(10000, len(qrels)))
for (i, a), (j, b) in itertools.combinations(enumerate(per_query), 2):
    ps = {}
    for m in MEASURES:
        diff = b[m] - a[m]
        ps[m] = float((np.sum(np.abs(signs @ diff) >= abs(diff.sum()) - 1e-9) + 1) / 10001)
    print(paths[i], paths[j], ps)
