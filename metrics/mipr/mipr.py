"""MIPR retrieval metrics: nDCG@k, R-L1@k, Hit-L1@1/@k, SC-R-L1@k and SC-R-L1@k* (values in [0, 1])."""

import datasets
import evaluate

# unused here: evaluate copies only this file's relative imports next to it, and mipr_measures needs lookup
from .lookup import PairIndex
from .mipr_measures import DEFAULT_K
from .mipr_measures import Qrels
from .mipr_measures import evaluate_run

_CITATION = """\
@misc{li_mipr,
  title = {MIPR: A Benchmark for Reasoning-Intensive Multimodal Intent-to-Product Retrieval with Multi-Category Solutions},
  author = {Qiang Li and Xuan Lu and Jian Ruan and Manxi Lin and Jiacheng Chen and Wen Shen and Zhihua Wei and Xiaoyu Shen and Dan Ou and Xiangheng Kong and Junjun Zheng}
}
"""

_DESCRIPTION = """\
Scores ranked product lists against the MIPR judgments. Rank is the position in the submitted list.
nDCG@k uses linear gains L1=2, L2=1 (others and unjudged 0), discount 1/log2(rank+1) and the ideal DCG of
the k largest judged gains (trec_eval ndcg_cut). R-L1@k is |L1 in top k| / |L1 judged| (trec_eval recall;
0 for a query without L1). Hit-L1@k is 1 if any L1 is in the top k (trec_eval success). SC-R-L1@k is the
fraction of the query's distinct L1 leaf categories covered by L1 items in the top k; SC-R-L1@k* averages
it over queries with at least two L1 categories only.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `list` of `str`): ranked item ids, one list per query, best first.
    references (`list` of `list` of `str`): the judged item ids of each query, aligned with predictions.
    grades (`list` of `list` of `str`): their grades (L1, L2, N1, N2, N3), aligned with references.
    categories (`list` of `list` of `str`): their `treecate_full_path`, aligned with references
        (only L1 items' categories are used).
    query_ids (`list` of `str`, optional): names queries in errors and in per-query output.
    k (`list` of `int`, optional): cutoffs, default [10]. Hit-L1@1 is always reported.
    capped_recall (`bool`, optional): also report R-L1-capped@k, denominator min(k, |L1|).
    per_query (`bool`, optional): add `per_query`, each measure's value for every query.
    by_category (`bool`, optional): add `by_category`, the means per query's main top-level category
        (the most frequent first segment of its L1 items' category paths; "(no L1)" for queries without L1).
Returns:
    `dict`: nDCG@k, R-L1@k, Hit-L1@1, Hit-L1@k, SC-R-L1@k, SC-R-L1@k* (floats in [0, 1]),
    num_queries and num_multi_category_queries.
Examples:
    >>> import evaluate
    >>> mipr = evaluate.load("metrics/mipr")
    >>> predictions = [["b", "a", "e"], ["d", "a"]]
    >>> references = [["a", "b", "c"], ["d"]]
    >>> grades = [["L1", "L2", "L1"], ["N1"]]
    >>> categories = [["x-1", "y-2", "x-3"], ["z-4"]]
    >>> results = mipr.compute(
    ...     predictions=predictions, references=references, grades=grades, categories=categories, k=[2]
    ... )
    >>> {name: round(value, 4) for name, value in results.items()}
    {'nDCG@2': 0.3467, 'R-L1@2': 0.25, 'Hit-L1@1': 0.0, 'Hit-L1@2': 0.5, 'SC-R-L1@2': 0.25, 'SC-R-L1@2*': 0.5, 'num_queries': 2, 'num_multi_category_queries': 1}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Mipr(evaluate.Metric):
    def _info(self):
        info = evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Value("string")),
                    "grades": datasets.Sequence(datasets.Value("string")),
                    "categories": datasets.Sequence(datasets.Value("string")),
                }
            ),
            reference_urls=["https://github.com/usnistgov/trec_eval"],
        )
        # Hand _compute Arrow columns, not Python lists (much faster at full scale); set after
        # construction because MetricInfo only accepts a format for flat features.
        info.format = "arrow"
        return info

    def _compute(
        self,
        predictions,
        references,
        grades,
        categories,
        query_ids=None,
        k=DEFAULT_K,
        capped_recall=False,
        per_query=False,
        by_category=False,
    ):
        qrels = Qrels(references, grades, categories, query_ids=query_ids)
        return evaluate_run(
            qrels, predictions, k=k, capped_recall=capped_recall, per_query=per_query, by_category=by_category
        )
