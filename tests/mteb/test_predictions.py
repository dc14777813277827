"""MTEB's saved predictions as a run: trec_eval's order (as ``mmrhub evaluate`` orders a dict run, and MTEB's own
scoring through pytrec_eval), aligned with the judged queries, refused when they are of other data. No mteb
needed."""

import json
import types

import numpy as np
import pyarrow as pa
import pytest

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.mteb.predictions import aligned
from mmrhub.mteb.predictions import ranked
from mmrhub.mteb.predictions import read_predictions
from mmrhub.mteb.predictions import write
from mmrhub.scoring.runs.reading import read_run


def saved(tmp_path, scored, split="test"):
    path = tmp_path / "Task_predictions.json"
    payload = {"mteb_model_meta": {"model_name": "org/model", "revision": "7"}, "default": {split: scored}}
    path.write_text(json.dumps(payload))
    return path


def test_order_is_trec_evals_as_for_a_dict_run(tmp_path):
    rng = np.random.default_rng(3)
    scored = {
        "q1": {"a": 0.5, "b": 0.5, "c": 0.9, "d": 0.5 + 1e-12, "e": -0.1},  # d ties b and a in single precision
        "q2": {f"p{i}": float(s) for i, s in enumerate(rng.choice([0.1, 0.2, 0.3], size=40))},  # many ties
    }
    ranking = ranked(read_predictions(saved(tmp_path, scored)).scored)
    assert ranking.query_ids == ["q1", "q2"] and ranking.rankings[0] == ["c", "d", "b", "a", "e"]
    assert ranking.scores[0] == [0.9, 0.5 + 1e-12, 0.5, 0.5, -0.1]
    as_dict_run = tmp_path / "dict_run.json"  # the predictions' own dict, as `mmrhub evaluate` reads it
    as_dict_run.write_text(json.dumps(scored))
    assert read_run(str(as_dict_run)).rankings.to_pylist() == ranking.rankings
    written = read_run(str(write(tmp_path / "run.json", ranking)))
    assert written.format == "json" and written.rankings.to_pylist() == ranking.rankings


def test_a_file_without_the_split_is_named(tmp_path):
    with pytest.raises(
        ValueError, match=r"Task_predictions.json: holds no predictions for subset 'default', split 'test'"
    ):
        read_predictions(saved(tmp_path, {}, split="dev"))


def truth(judged: dict, unjudged=()):
    """A stand-in for the judgments: the query ids and, per query, how many items it judges."""
    rows = np.repeat(np.arange(len(judged)), list(judged.values()))
    return types.SimpleNamespace(
        query_ids=pa.array(list(judged)),
        unjudged_query_ids=pa.array(list(unjudged), pa.string()),
        judgments=types.SimpleNamespace(pairs=types.SimpleNamespace(rows=rows)),
    )


def test_aligned_follows_the_judgments_and_fills_queries_mteb_cannot_rank():
    ranking = ranked({"b": {"x": 1.0}, "a": {"y": 2.0, "x": 1.0}})
    run = aligned(ranking, truth({"a": 2, "empty": 0, "b": 1}, unjudged=["c"]))
    assert run.query_ids == ["a", "empty", "b"] and run.rankings == [["y", "x"], [], ["x"]]
    assert run.unranked == ["empty"] and "1 judged queries have an empty judgment list" in run.notes[0]


@pytest.mark.parametrize(
    "scored, problem",
    [
        ({"a": {"x": 1.0}}, r"it lacks 1 judged queries \(e\.g\. 'b'\)"),
        (
            {"a": {"x": 1.0}, "b": {"x": 1.0}, "z": {"x": 1.0}},
            r"1 of its queries are not the benchmark's \(e\.g\. 'z'\)",
        ),
    ],
)
def test_predictions_of_other_data_are_refused(scored, problem):
    with pytest.raises(ValueError, match=problem + r".*Was the export made from other data\?"):
        aligned(ranked(scored), truth({"a": 1, "b": 3}))


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_the_judgment_index_counts_items_per_query(benchmark):
    """``aligned`` reads each query's judged items from the metric's index (``pairs.rows``), which both metrics have."""
    bench = BENCHMARKS[benchmark]
    judgments = bench.read_truth(bench.sample_dir).judgments
    counts = np.bincount(judgments.pairs.rows, minlength=judgments.pairs.num_rows)
    assert counts.sum() == len(judgments.pairs.rows) and (counts > 0).all()


def test_predictions_of_other_data_on_the_sample_name_the_sample_and_data_dir():
    """No --data-dir: the sample was scored, so the line names it (``sample_scored``) and --data-dir."""
    from mmrhub.scoring.score import sample_scored

    judged = truth({"a": 1, "b": 3})
    judged.corpus_ids = pa.array(["x"])
    sample = sample_scored("MIPR", judged)
    with pytest.raises(ValueError) as refused:
        aligned(ranked({"a": {"x": 1.0}, "b": {"x": 1.0}, "z": {"x": 1.0}}), judged, "org/mipr-mteb", sample)
    assert str(refused.value) == (
        "MTEB's predictions on org/mipr-mteb do not fit the bundled MIPR sample (2 queries), which was scored as no "
        "--data-dir was given (1 of its queries are not the benchmark's (e.g. 'z')): pass the --data-dir the export "
        "was made from."
    )
