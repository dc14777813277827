import mteb
from mteb.abstasks import AbsTaskRetrieval
from mteb.models import ModelMeta

run = {...}  # your ranking: question_id -> {passage_id: similarity}


class M2KR(AbsTaskRetrieval):
    """M2KR: recall_at_k is the track's Recall@k (a query scores its share of positives in the top k)."""

    metadata = mteb.TaskMetadata(
        name="{mteb_task}",
        description="An image, with an optional question, retrieves its passages (text and screenshot).",
        dataset={"path": "{repo_id}", "revision": "main"},
        type="Any2AnyRetrieval",
        category="it2it",
        modalities=["image", "text"],
        eval_langs=["eng-Latn"],
        main_score="recall_at_5",
    )


class Ranking:
    """A fixed ranking as a model MTEB evaluates (mteb.SearchProtocol)."""

    mteb_model_meta = ModelMeta.create_empty({"name": "your-org/your-model", "modalities": ["image", "text"]})

    def index(self, corpus, **kwargs):
        pass

    def search(self, queries, **kwargs):
        return {qid: run[qid] for qid in queries["id"]}


scores = mteb.evaluate(Ranking(), M2KR(), cache=None).task_results[0].scores["test"][0]
print({"Recall@1": scores["recall_at_1"], "Recall@3": scores["recall_at_3"], "Recall@5": scores["recall_at_5"]})
