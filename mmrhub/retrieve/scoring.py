"""Validate a written run against the benchmark and print its scores, through ``mmrhub evaluate``'s code."""

from mmrhub.truth import default_k
from mmrhub.truth import load_truth
from mmrhub.truth import read_valid_run
from mmrhub.truth import score
from mmrhub.report import table
from mmrhub.runs import aligned
from mmrhub.runs import check_pool


def score_run(benchmark: str, path, data_dir=None, baseline=None) -> str:
    """The Markdown metric table (x100) of a run file, after checking it covers every query with corpus ids
    only (and, reranking, exactly each query's ``baseline`` pool). Raises RunError otherwise."""
    truth = load_truth(benchmark, data_dir)
    run = read_valid_run(truth, path)
    if baseline is not None:
        check_pool(run, read_valid_run(truth, baseline))
    result = score(truth, aligned(run, truth.query_ids), k=default_k(benchmark))
    return table([(run.name, result)])
