import evaluate
from datasets import load_dataset

qrels = load_dataset("{repo_id}", "qrels", split="test")
corpus = load_dataset("{repo_id}", "corpus", split="test").select_columns(["item_id", "treecate_full_path"])
category = dict(zip(corpus["item_id"], corpus["treecate_full_path"]))
references = [[item["item_id"] for item in row["items"]] for row in qrels]
grades = [[item["final_grade"] for item in row["items"]] for row in qrels]
categories = [[category[item["item_id"]] for item in row["items"]] for row in qrels]
run = {...}  # your ranking: query idx -> product item_ids, best first
predictions = [run[idx] for idx in qrels["idx"]]
metric = evaluate.load("{metric_space}")
print(metric.compute(predictions=predictions, references=references, grades=grades, categories=categories, k=[10]))
