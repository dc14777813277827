"""The shortest honest peer of `mmrhub evaluate mipr`: `json` and plain Python, no pytrec_eval, about 25 lines.

    python bench/peer_plain.py DATA_DIR RUN [RUN ...]

Reads the annotation JSON Lines one line at a time into {query: {item: gain}} (gains L1=2, L2=1; nothing else of a
line is kept) and each run (official JSON) with `json`, then prints the means of nDCG@10, R-L1@10 and Hit-L1@1/@10
over the judged queries. It keeps only what scoring needs, so its memory is the least a Python scorer needs; it checks
nothing (a query missing from the run counts 0, an unknown id is unjudged).
"""

import json
import math
import sys

GAIN = {"L1": 2, "L2": 1}
data_dir, runs = sys.argv[1], sys.argv[2:]
qrels = {}
with open(f"{data_dir}/mipr_annotation.jsonl", encoding="utf-8") as f:
    for line in f:
        if line.strip():
            row = json.loads(line)
            qrels[row["idx"]] = {i["item_id"]: GAIN.get(i["final_grade"], 0) for i in row["items"]}
for path in runs:
    with open(path, encoding="utf-8") as f:
        run = {entry["qid"]: [item["did"] for item in entry["ranked"]] for entry in json.load(f)}
    sums = [0.0, 0.0, 0.0, 0.0]
    for qid, judged in qrels.items():
        gains = [judged.get(did, 0) for did in run.get(qid, [])[:10]]
        ideal = sorted(judged.values(), reverse=True)[:10]
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(gains))
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        l1 = sum(g == 2 for g in judged.values())
        sums[0] += dcg / idcg if idcg else 0.0
        sums[1] += sum(g == 2 for g in gains) / l1 if l1 else 0.0
        sums[2] += float(gains[:1] == [2])
        sums[3] += float(2 in gains)
    names = ["nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10"]
    print(path, {name: round(total / len(qrels), 4) for name, total in zip(names, sums)})
