import mteb
from datasets import load_dataset
from mteb.abstasks import AbsTaskRetrieval
from mteb.models import ModelMeta

run = {...}  # your ranking: query id -> {product id: similarity}


class MIPR(AbsTaskRetrieval):
    """MIPR: on `qrels` (gains L1=2, L2=1) ndcg_at_k is nDCG@k; on `qrels-l1` recall_at_k and hit_rate_at_k are
    R-L1@k and Hit-L1@k over the queries with an L1 judgment."""

    def __init__(self, qrels="qrels"):
        super().__init__()
        self.qrels = qrels

    def dataset_transform(self, num_proc=None, **kwargs):
        judged = {}
        for row in load_dataset("{repo_id}", self.qrels, split="test"):
            judged.setdefault(row["query-id"], {})[row["corpus-id"]] = row["score"]
        self.dataset["default"]["test"]["relevant_docs"] = judged

    metadata = mteb.TaskMetadata(
        name="{mteb_task}",
        description="An image and a question retrieve the products (image and title) that meet the need.",
        dataset={"path": "{repo_id}", "revision": "main"},
        type="Any2AnyRetrieval",
        category="it2it",
        modalities=["image", "text"],
        eval_langs=["zho-Hans"],
        main_score="ndcg_at_10",
    )


class Ranking:
    """A fixed ranking as a model MTEB evaluates (mteb.SearchProtocol)."""

    mteb_model_meta = ModelMeta.create_empty({"name": "your-org/your-model", "modalities": ["image", "text"]})

    def index(self, corpus, **kwargs):
        pass

    def search(self, queries, **kwargs):
        return {qid: run[qid] for qid in queries["id"]}


def scores(qrels):
    return mteb.evaluate(Ranking(), MIPR(qrels), cache=None).task_results[0].scores["test"][0]


graded, l1_only = scores("qrels"), scores("qrels-l1")
print(
    {
        "nDCG@10": graded["ndcg_at_10"],
        "R-L1@10": l1_only["recall_at_10"],
        "Hit-L1@1": l1_only["hit_rate_at_1"],
        "Hit-L1@10": l1_only["hit_rate_at_10"],
    }
)
