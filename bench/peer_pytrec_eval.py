"""The peer a user would write instead of `mmrhub evaluate mipr`: json + pytrec_eval, about 20 lines.

    python bench/peer_pytrec_eval.py DATA_DIR RUN [RUN ...]

Reads the annotation JSON Lines and each run (official JSON) with `json`, scores nDCG@10 (gains L1=2, L2=1),
recall@10 and success@1/@10 of L1 items with pytrec_eval, and prints the means.
"""

import json
import sys

import pytrec_eval

GAIN = {"L1": 2, "L2": 1}
data_dir, runs = sys.argv[1], sys.argv[2:]
with open(f"{data_dir}/mipr_annotation.jsonl", encoding="utf-8") as f:
    rows = [json.loads(line) for line in f if line.strip()]
qrels = {row["idx"]: {i["item_id"]: GAIN.get(i["final_grade"], 0) for i in row["items"]} for row in rows}
evaluator = pytrec_eval.RelevanceEvaluator(
    qrels, {"ndcg_cut_10", "recall_10", "success_1", "success_10"}, relevance_level=2
)
for path in runs:
    with open(path, encoding="utf-8") as f:
        run = {
            e["qid"]: {d["did"]: float(len(e["ranked"]) - r) for r, d in enumerate(e["ranked"])} for e in json.load(f)
        }
    scores = evaluator.evaluate(run)
    names = ["ndcg_cut_10", "recall_10", "success_1", "success_10"]
    print(path, {name: round(sum(s[name] for s in scores.values()) / len(scores), 4) for name in names})
