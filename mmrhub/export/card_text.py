"""The prose of each benchmark's dataset card: what the card template fills in per benchmark."""

MIPR = {
    "pretty_name": "MIPR",
    "language": ["zh"],
    "task_categories": ["visual-document-retrieval", "text-retrieval"],
    "tags": ["multimodal-retrieval", "e-commerce", "product-search"],
    "summary": (
        "MIPR is a benchmark for reasoning-intensive multimodal intent-to-product retrieval in Chinese e-commerce. "
        "Each query pairs a situational image with a free-form question; a retriever must find the products of a "
        "shared corpus that satisfy the underlying need, which may span several product categories. Built from "
        "real Taobao search queries and product listings."
    ),
    "full_counts": "3,522 queries, 30,731 products and 447,809 graded judgments",
    "sources": (
        "- **Repository:** the MIPR release (dataset, evaluation code and construction pipeline); its README is the "
        "source of this card."
    ),
    "creation": (
        "Construction combines query filtering and intent analysis, two-round product-term generation, "
        "multi-route retrieval, deduplication, three-model relevance labeling with Sonnet adjudication, and "
        "retrieval-based pooling. Product IDs are hashed and query IDs are renumbered."
    ),
    "limitations": (
        "Judgments cover the discovered and pooled candidates, not every query-product pair: unjudged pairs "
        "receive zero gain. The benchmark reflects Chinese e-commerce queries and the supplied product corpus; its "
        "solution categories are the annotated ones, not an exhaustive list of all possible solutions. It is an "
        "evaluation benchmark with no training split."
    ),
    "metrics": (
        "nDCG@10 with linear gains L1=2, L2=1 (all other grades and unjudged products 0); R-L1@10, the recall of "
        "judged L1 products; Hit-L1@1 and Hit-L1@10, whether an L1 product is retrieved; SC-R-L1@10, the coverage "
        "of the query's judged L1 leaf categories (`treecate_full_path`), and SC-R-L1@10*, the same over the "
        "queries with at least two L1 categories."
    ),
    "evaluate": """\
```python
import evaluate
from datasets import load_dataset

qrels = load_dataset("{repo_id}", "qrels", split="test")
corpus = load_dataset("{repo_id}", "corpus", split="test").select_columns(["item_id", "treecate_full_path"])
category = dict(zip(corpus["item_id"], corpus["treecate_full_path"]))
references = [[item["item_id"] for item in row["items"]] for row in qrels]
grades = [[item["final_grade"] for item in row["items"]] for row in qrels]
categories = [[category[item["item_id"]] for item in row["items"]] for row in qrels]
run = {{...}}  # your ranking: query idx -> product item_ids, best first
predictions = [run[idx] for idx in qrels["idx"]]
metric = evaluate.load("{metric_space}")
print(metric.compute(predictions=predictions, references=references, grades=grades, categories=categories, k=[10]))
```""",
    "mteb_metrics": (
        "On the `qrels` config MTEB's `ndcg_at_10` is MIPR's nDCG@10 (the scores are the grade gains L1=2, L2=1). "
        "MTEB's `recall_at_k` and `hit_rate_at_k` on `qrels` count L2 products as relevant too, so they are not "
        "MIPR measures; on the `qrels-l1` config (L1 judgments only) they are MIPR's R-L1@k and Hit-L1@k, over "
        "the queries with at least one L1 judgment (MIPR scores a query without one as 0, MTEB leaves it out). "
        "MTEB cannot compute SC-R-L1@k: it needs the products' leaf categories, which are in the `corpus` config "
        "of the plain export and the MIPR metric, not in MTEB."
    ),
    "mteb_evaluate": """\
```python
from datasets import load_dataset
from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

data = RetrievalDatasetLoader("{repo_id}", revision="main", split="test").load()
l1 = {{}}
for row in load_dataset("{repo_id}", "qrels-l1", split="test"):
    l1.setdefault(row["query-id"], {{}})[row["corpus-id"]] = row["score"]
run = {{...}}  # your ranking: query id -> {{product id: similarity}}
graded = calculate_retrieval_scores(run, data["relevant_docs"], k_values=[1, 10])
l1_only = calculate_retrieval_scores({{q: run[q] for q in l1}}, l1, k_values=[1, 10])  # queries with an L1
print({{"nDCG@10": graded.ndcg["NDCG@10"], "R-L1@10": l1_only.recall["Recall@10"],
       "Hit-L1@1": l1_only.hit_rate["HitRate@1"], "Hit-L1@10": l1_only.hit_rate["HitRate@10"]}})
```""",
}

M2KR = {
    "pretty_name": "M2KR-WWW2025-Challenge",
    "language": ["en"],
    "task_categories": ["visual-document-retrieval", "text-retrieval"],
    "tags": ["multimodal-retrieval", "knowledge-retrieval", "www2025-challenge"],
    "summary": (
        "M2KR-WWW2025-Challenge is a multimodal retrieval dataset for image-to-document and image+text-to-document "
        "matching, Task 2 of Track 1 (Multimodal Document Retrieval Challenge) at the EReL@MIR Workshop, The Web "
        "Conference 2025. Each query (an image, with an optional question) must retrieve its passages from a shared "
        "pool of passages. This release includes the evaluation ground truth (`challenge_answers`)."
    ),
    "full_counts": "6,415 queries and 47,318 passages",
    "sources": (
        "- **Paper:** https://arxiv.org/abs/2402.08327\n"
        "- **Project page:** https://preflmr.github.io/\n"
        "- **FLMR implementation:** https://github.com/LinWeizheDragon/FLMR\n"
        "- **Original challenge release:** https://huggingface.co/datasets/Jingbiao/M2KR-Challenge"
    ),
    "creation": (
        "A mirror of the challenge release Jingbiao/M2KR-Challenge with the ground truth added. The released "
        "`pos_item_ids` use the canonical `challenge_passage.passage_id` form and join directly to the passages."
    ),
    "limitations": (
        "About 47% of the queries carry a question; the others are image-only. 601 queries have more than one "
        "positive passage; such a query scores a recall of 1 at k only when all its positives are in its top k."
    ),
    "metrics": (
        "The mean of Recall@1, Recall@3 and Recall@5, with recall computed against the full positive set: a query "
        "with several positives scores 1 at k only when all of them are in its top k."
    ),
    "evaluate": """\
```python
import evaluate
from datasets import load_dataset

answers = load_dataset("{repo_id}", "challenge_answers", split="train")
run = {{...}}  # your ranking: question_id -> passage_ids, best first
predictions = [run[question_id] for question_id in answers["question_id"]]
metric = evaluate.load("{metric_space}")
print(metric.compute(predictions=predictions, references=answers["pos_item_ids"]))
```""",
    "mteb_metrics": (
        "MTEB's `recall_at_k` is the track's Recall@k exactly (every positive scores 1, and a query scores its "
        "share of positives found, so a query with several positives scores 1 only with all of them in the top "
        "k); the track's measure is the mean of `recall_at_1`, `recall_at_3` and `recall_at_5`. MTEB's "
        "`hit_rate_at_k` is FLMR's Recall@K (any positive in the top k). The `query` config keeps each query's "
        "`instruction`, which PreFLMR puts before the question. The challenge's queries (split `train` in the "
        "plain export) are the `test` split here, the split MTEB tasks evaluate."
    ),
    "mteb_evaluate": """\
```python
from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

data = RetrievalDatasetLoader("{repo_id}", revision="main", split="test").load()
run = {{...}}  # your ranking: question_id -> {{passage_id: similarity}}
scores = calculate_retrieval_scores(run, data["relevant_docs"], k_values=[1, 3, 5])
print({{name: scores.recall[name] for name in ("Recall@1", "Recall@3", "Recall@5")}})
```""",
}
