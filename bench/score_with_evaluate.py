"""The `evaluate` route as a whole process: what a user of the metric module runs instead of `mmrhub evaluate`.

    python bench/score_with_evaluate.py DATA_DIR RUN [RUN ...]

Reads the annotation and corpus JSON Lines and each run (official JSON) with `json`, as the pytrec_eval script
does, and scores them with `evaluate.load("metrics/mipr").compute(...)` (nDCG@10, R-L1@10, Hit-L1@1/@10, ...).
"""

import json
import sys
from pathlib import Path

import evaluate

METRIC = Path(__file__).resolve().parent.parent / "metrics" / "mipr"
data_dir, runs = sys.argv[1], sys.argv[2:]
with open(f"{data_dir}/mipr_corpus.jsonl", encoding="utf-8") as f:
    category = {row["item_id"]: row["treecate_full_path"] for row in map(json.loads, f)}
with open(f"{data_dir}/mipr_annotation.jsonl", encoding="utf-8") as f:
    rows = [json.loads(line) for line in f if line.strip()]
references = [[item["item_id"] for item in row["items"]] for row in rows]
grades = [[item["final_grade"] for item in row["items"]] for row in rows]
categories = [[category[item] for item in items] for items in references]
mipr = evaluate.load(str(METRIC))
for path in runs:
    with open(path, encoding="utf-8") as f:
        ranked = {entry["qid"]: [item["did"] for item in entry["ranked"]] for entry in json.load(f)}
    predictions = [ranked[row["idx"]] for row in rows]
    print(path, mipr.compute(predictions=predictions, references=references, grades=grades, categories=categories))
