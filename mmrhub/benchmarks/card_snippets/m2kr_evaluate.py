import evaluate
from datasets import load_dataset

answers = load_dataset("{repo_id}", "challenge_answers", split="train")
run = {...}  # your ranking: question_id -> passage_ids, best first
predictions = [run[question_id] for question_id in answers["question_id"]]
metric = evaluate.load("{metric_space}")
print(metric.compute(predictions=predictions, references=answers["pos_item_ids"]))
