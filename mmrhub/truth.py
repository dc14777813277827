"""Ground truth of each benchmark, read through the builders (``mipr.load`` / ``m2kr.load``) as Arrow columns."""

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.benchmarks import builder_module
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.metrics.mipr import mipr_measures
from mmrhub.runs import read_run
from mmrhub.runs import restore_stripped_ids
from mmrhub.runs import validate

@dataclass
class Truth:
    benchmark: str
    query_ids: list
    corpus_ids: frozenset
    prepared: object  # mipr_measures.Qrels or m2kr_measures.Positives
    groups: object = None  # per-query labels for the breakdown (M2KR task), aligned with query_ids


def _arrow(dataset, columns) -> pa.Table:
    """Only the named columns, as Arrow: the image columns are never decoded."""
    return dataset.select_columns(columns).with_format("arrow")[:]


def prepare_mipr(qrels: pa.Table, corpus: pa.Table):
    """MIPR judgments (``idx``, ``items``) and corpus (``item_id``, ``treecate_full_path``), as the builder
    yields them -> the metric's prepared ``Qrels``, without a round trip through Python objects."""
    items = qrels["items"].combine_chunks()
    flat = pc.list_flatten(items)
    item_ids = pa.ListArray.from_arrays(items.offsets, pc.struct_field(flat, "item_id"))
    grades = pa.ListArray.from_arrays(items.offsets, pc.struct_field(flat, "final_grade"))
    return mipr_measures.Qrels.with_corpus_categories(
        item_ids, grades, corpus["item_id"], corpus["treecate_full_path"], query_ids=qrels["idx"].to_pylist()
    )


def mipr_truth(data_dir=None) -> Truth:
    mipr = builder_module("mipr")
    qrels = _arrow(mipr.load("qrels", data_dir), ["idx", "items"])
    corpus = _arrow(mipr.load("corpus", data_dir), ["item_id", "treecate_full_path"])
    prepared = prepare_mipr(qrels, corpus)
    return Truth("mipr", prepared.query_ids, frozenset(corpus["item_id"].to_pylist()), prepared)


def m2kr_truth(data_dir=None) -> Truth:
    m2kr = builder_module("m2kr")
    answers = _arrow(m2kr.load("challenge_answers", data_dir), ["question_id", "pos_item_ids"])
    questions = _arrow(m2kr.load("challenge_data", data_dir), ["question_id", "task"])
    passages = _arrow(m2kr.load("challenge_passage", data_dir), ["passage_id"])
    query_ids = answers["question_id"].to_pylist()
    task = dict(zip(questions["question_id"].to_pylist(), questions["task"].to_pylist()))
    groups = [task[qid] for qid in query_ids]
    prepared = m2kr_measures.Positives(answers["pos_item_ids"], query_ids=query_ids)
    return Truth("m2kr", query_ids, frozenset(passages["passage_id"].to_pylist()), prepared, groups)


def load_truth(benchmark: str, data_dir=None) -> Truth:
    return {"mipr": mipr_truth, "m2kr": m2kr_truth}[benchmark](data_dir)


def score(truth: Truth, rankings, k, per_query=False, breakdown=False, capped_recall=False, variants=("recall",)):
    """The metric module's evaluate_run on rankings aligned with ``truth.query_ids``."""
    if truth.benchmark == "mipr":
        return mipr_measures.evaluate_run(
            truth.prepared, rankings, k=k, capped_recall=capped_recall, per_query=per_query, by_category=breakdown
        )
    return m2kr_measures.evaluate_run(
        truth.prepared, rankings, k=k, variants=variants, per_query=per_query, tasks=truth.groups if breakdown else None
    )


def default_k(benchmark: str) -> tuple:
    return {"mipr": mipr_measures, "m2kr": m2kr_measures}[benchmark].DEFAULT_K


def read_valid_run(truth: Truth, path):
    """Read a run file and validate it against the benchmark (Kaggle CSV ids get their 'A' back first)."""
    run = read_run(path)
    if run.format == "kaggle":
        restore_stripped_ids(run, truth.corpus_ids)
    validate(run, truth.query_ids, truth.corpus_ids)
    return run
