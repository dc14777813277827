"""M2KR (WWW 2025 challenge) retrieval metrics: Recall@1/3/5 against the full positive set and their mean."""

import datasets
import evaluate

from .m2kr_measures import DEFAULT_K
from .m2kr_measures import Positives
from .m2kr_measures import evaluate_run
from .shared import check_batch

_CITATION = """\
@inproceedings{lin-etal-2024-preflmr,
    title = "{P}re{FLMR}: Scaling Up Fine-Grained Late-Interaction Multi-modal Retrievers",
    author = "Lin, Weizhe and Mei, Jingbiao and Chen, Jinghong and Byrne, Bill",
    booktitle = "Proceedings of the 62nd Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2024",
    url = "https://aclanthology.org/2024.acl-long.289",
    pages = "5294--5316",
}
"""

_DESCRIPTION = """\
Scores ranked passage lists against the M2KR challenge ground truth. Rank is the position in the list.
Recall@k = |positives in top k| / |positives| (the challenge's "proportion of relevant documents retrieved"),
so a query with several positives needs all of them in the top k to score 1. The mean of Recall@1, Recall@3
and Recall@5 is the M2KR track score (the Kaggle leaderboard averaged two tracks, MMDocIR and M2KR). Variants:
"hit" (FLMR's Recall@K: any positive in the top k) and "strict" (1 only if all positives are in the top k).

| rule | status |
| --- | --- |
| Recall@k against the full positive set; k = 1, 3, 5 and their mean | fixed by the challenge's dataset card |
| rank = position in the submitted list | our reading: the card describes no run format (the Kaggle CSV lists ids in order) |
| variants `hit` and `strict` (off by default) | our reading: FLMR's hit rate, and a rate of queries with all positives found |
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): ranked passage ids, one list per query, best first.
    references (`list` of `list` of `str`): the positive passage ids of each query, aligned with predictions.
    query_ids (`list` of `str`, optional): names queries in errors and in per-query output.
    k (`list` of `int`, optional): cutoffs, default [1, 3, 5].
    variants (`list` of `str`, optional): any of "recall" (default), "hit", "strict".
    per_query (`bool`, optional): add `per_query`, each measure's value for every query.
Returns:
    `dict`: Recall@k and Recall-mean (Hit@k / Hit-mean, StrictRecall@k / StrictRecall-mean for the
    other variants), floats in [0, 1], and num_queries.
Examples:
    >>> import evaluate
    >>> m2kr = evaluate.load("metrics/m2kr")
    >>> predictions = [["x", "a", "y"], ["c", "z", "q", "b"]]
    >>> references = [["a"], ["b", "c"]]
    >>> results = m2kr.compute(predictions=predictions, references=references, variants=["recall", "hit"])
    >>> {name: round(value, 4) for name, value in results.items()}
    {'Recall@1': 0.25, 'Recall@3': 0.75, 'Recall@5': 1.0, 'Recall-mean': 0.6667, 'Hit@1': 0.5, 'Hit@3': 1.0, 'Hit@5': 1.0, 'Hit-mean': 0.8333, 'num_queries': 2}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class M2kr(evaluate.Metric):
    """The M2KR challenge metric as an ``evaluate`` module."""

    def _info(self):
        info = evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Value("string")),
                }
            ),
            reference_urls=["https://huggingface.co/datasets/Jingbiao/M2KR-Challenge"],
        )
        # Hand _compute Arrow columns, not Python lists (much faster at full scale); set after
        # construction because MetricInfo only accepts a format for flat features.
        info.format = "arrow"
        return info

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch; every column must come, each one list of strings per query (a ValueError names it)."""
        given = {"predictions": predictions, "references": references, **kwargs}
        check_batch({name: given.get(name) for name in self._feature_names()}, "m2kr")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        query_ids=None,
        k=DEFAULT_K,
        variants=("recall",),
        per_query=False,
    ):
        positives = Positives(references, query_ids=query_ids)
        return evaluate_run(positives, predictions, k=k, variants=variants, per_query=per_query)
