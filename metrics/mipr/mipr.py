"""MIPR retrieval metrics: nDCG@k, R-L1@k, Hit-L1@1/@k, SC-R-L1@k and SC-R-L1@k* (values in [0, 1])."""

import datasets
import evaluate

from .mipr_measures import DEFAULT_K
from .mipr_measures import READINGS
from .mipr_measures import Qrels
from .mipr_measures import evaluate_run
from .shared import check_batch

_CITATION = """\
@misc{li_mipr,
  title = {MIPR: A Benchmark for Reasoning-Intensive Multimodal Intent-to-Product Retrieval with Multi-Category Solutions},
  author = {Qiang Li and Xuan Lu and Jian Ruan and Manxi Lin and Jiacheng Chen and Wen Shen and Zhihua Wei and Xiaoyu Shen and Dan Ou and Xiangheng Kong and Junjun Zheng}
}
"""

_DESCRIPTION = """\
Scores ranked product lists against the MIPR judgments (the card defines each measure). A mean over no query is None.

| rule | status |
| --- | --- |
| gains L1=2 and L2=1, unjudged 0; rank = position in the list | fixed by the MIPR README |
| R-L1: recall of judged L1 items; Hit-L1: an L1 in the top k; SC-R-L1: coverage of the judged L1 leaf categories, and SC-R-L1@k* over the queries with at least two | fixed by the MIPR README |
| N1-N3 gain 0; discount 1/log2(rank+1); means over queries; ideal DCG 0 scores 0; the oracle's tiers | our reading (the card says why) |
""" + "".join(reading.row(name) + "\n" for name, reading in READINGS.items())

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): ranked item ids, one list per query, best first.
    references, grades, categories (`list` of `list` of `str`): each query's judged item ids, their grades (L1, L2,
        N1, N2, N3) and their `treecate_full_path`.
    query_ids (`list` of `str`, optional): names queries in errors and in per-query output.
    k (`list` of `int`, optional): cutoffs, default [10]. Hit-L1@1 is always reported.
    per_query (`bool`, optional): add each query's values (None: left out of the mean).
    no_l1, recall_denominator, covered_by, category, ideal (`str`, optional): the readings in the table above.
Returns:
    `dict`: nDCG@k, R-L1@k, Hit-L1@1, Hit-L1@k, SC-R-L1@k, SC-R-L1@k* (in [0, 1], or None) and query counts.
Examples:
    >>> import evaluate
    >>> mipr = evaluate.load("metrics/mipr")
    >>> predictions = [["b", "a", "e"], ["d", "a"]]
    >>> references = [["a", "b", "c"], ["d"]]
    >>> grades = [["L1", "L2", "L1"], ["N1"]]
    >>> categories = [["x-1", "y-2", "x-3"], ["z-4"]]
    >>> results = mipr.compute(predictions=predictions, references=references, grades=grades, categories=categories, k=[2])
    >>> {name: round(value, 4) for name, value in results.items()}
    {'nDCG@2': 0.3467, 'R-L1@2': 0.25, 'Hit-L1@1': 0.0, 'Hit-L1@2': 0.5, 'SC-R-L1@2': 0.25, 'SC-R-L1@2*': 0.5, 'num_queries': 2, 'num_multi_category_queries': 1}
    >>> one_category = [["x-1", "y-2", "x-1"], ["z-4"]]  # no query has two L1 categories: SC-R-L1@10* is undefined
    >>> skip = mipr.compute(predictions=predictions, references=references, grades=grades, categories=one_category, no_l1="skip")
    >>> skip["R-L1@10"], skip["SC-R-L1@10"], skip["SC-R-L1@10*"]
    (0.5, 1.0, None)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Mipr(evaluate.Metric):
    """The MIPR metrics as an ``evaluate`` module."""

    def _info(self):
        strings = datasets.Sequence(datasets.Value("string"))
        features = datasets.Features(dict.fromkeys(("predictions", "references", "grades", "categories"), strings))
        info = evaluate.MetricInfo(
            description=_DESCRIPTION, citation=_CITATION, inputs_description=_KWARGS_DESCRIPTION, features=features
        )
        info.format = "arrow"  # Arrow columns reach _compute, not Python lists (MetricInfo refuses it for nested ones)
        return info

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch; every column must come, each one list of strings per query (a ValueError names it)."""
        given = {"predictions": predictions, "references": references, **kwargs}
        check_batch({name: given.get(name) for name in self._feature_names()}, "mipr")
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        grades,
        categories,
        query_ids=None,
        k=DEFAULT_K,
        per_query=False,
        no_l1=READINGS["no_l1"].default,
        recall_denominator=READINGS["recall_denominator"].default,
        covered_by=READINGS["covered_by"].default,
        category=READINGS["category"].default,
        ideal=READINGS["ideal"].default,
    ):
        qrels = Qrels(references, grades, categories, query_ids=query_ids)
        return evaluate_run(
            qrels,
            predictions,
            k=k,
            per_query=per_query,
            no_l1=no_l1,
            ideal=ideal,
            recall_denominator=recall_denominator,
            covered_by=covered_by,
            category=category,
        )
