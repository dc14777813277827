"""The MTEB tasks, as a user passes them to ``mteb.evaluate``: any model object (here a fixed ranking, the bundled
baseline run, as an MTEB ``SearchProtocol``), MTEB's scores equal to the benchmark's where the two agree by
definition, its predictions turned back into the same run; their metadata; and mteb imported only when asked for."""

import json
import pickle
import subprocess
import sys

import pytest
from _export_helpers import builder_module
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.mteb.predictions import ranked
from mmrhub.mteb.predictions import read_predictions
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import read_valid_run
from mmrhub.scoring.score import score

RUNS = {"mipr": MIPR_EMBEDDING, "m2kr": M2KR_RUN}


def test_importing_the_package_leaves_mteb_out():
    code = (
        "import sys, mmrhub.cli, mmrhub.mteb, mmrhub.mteb.predictions, mmrhub.mteb.pipeline, mmrhub.commands.mteb\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mteb', 'torch', 'datasets', 'gradio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


class FixedRanking:
    """A run file as a model MTEB evaluates (``mteb.SearchProtocol``): rank r scores 1/r, so MTEB keeps its order."""

    def __init__(self, path):
        from mteb.models import ModelMeta

        entries = json.loads(path.read_text())
        self.run = {e["qid"]: {i["did"]: 1 / (r + 1) for r, i in enumerate(e["ranked"])} for e in entries}
        self.mteb_model_meta = ModelMeta.create_empty({"name": "test/fixed-ranking", "modalities": ["image", "text"]})

    def index(self, corpus, **kwargs):
        pass

    def search(self, queries, top_k, **kwargs):
        return {qid: dict(list(self.run[qid].items())[:top_k]) for qid in queries["id"]}


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_any_model_object_through_mteb_evaluate(benchmark, exported, tmp_path):
    mteb = pytest.importorskip("mteb")
    from mmrhub.mteb import TASKS

    task = TASKS[benchmark](exported(benchmark, "mteb"), top_k=20)
    assert task.k_values == (1, 3, 5, 10, 20) and task.top_k == 20
    model = FixedRanking(RUNS[benchmark])
    result = mteb.evaluate(model, task, cache=None, prediction_folder=tmp_path, show_progress_bar=False)
    scores = result.task_results[0].scores["test"][0]
    bench = BENCHMARKS[benchmark]
    truth = bench.read_truth(bench.sample_dir)
    ours = score(bench, truth, read_valid_run(ScoringRequest(bench), truth, RUNS[benchmark])[1], {"k": (1, 3, 5, 10)})
    for mteb_name, measure in task.same_as.items():
        assert scores[mteb_name] == pytest.approx(ours[measure], abs=1e-5)  # MTEB rounds to five decimals
    # the predictions come back as the run that was evaluated (its top 20)
    predictions = read_predictions(tmp_path / task.prediction_file_name)
    assert predictions.model_name == "test/fixed-ranking"
    run = {e["qid"]: [i["did"] for i in e["ranked"]][:20] for e in json.loads(RUNS[benchmark].read_text())}
    back = ranked(predictions.scored)
    assert dict(zip(back.query_ids, back.rankings)) == {qid: run[qid] for qid in back.query_ids}
    # the task still names its export after MTEB unloaded its data, so it runs again
    assert task.metadata.dataset["path"] == str(exported(benchmark, "mteb"))
    again = mteb.evaluate(model, task, cache=None, show_progress_bar=False).task_results[0].scores["test"][0]
    assert again[task.metadata.main_score] == scores[task.metadata.main_score]


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_task_metadata(benchmark, exported):
    pytest.importorskip("mteb.abstasks")
    from mmrhub.mteb import TASKS

    task = TASKS[benchmark](exported(benchmark, "mteb"))
    metadata = task.metadata
    assert (metadata.type, metadata.category, metadata.modalities) == ("Any2AnyRetrieval", "it2it", ["image", "text"])
    assert metadata.main_score in task.same_as and metadata.eval_splits == ["test"]
    facts = BENCHMARKS[benchmark].mteb  # the declaration's plain data, the builder's name, citation and licence
    assert (metadata.description, metadata.reference, metadata.main_score) == (
        facts.description,
        facts.reference,
        facts.main_score,
    )
    assert (metadata.domains, metadata.eval_langs) == (list(facts.domains), list(facts.eval_langs))
    assert (task.same_as, task.differences) == (facts.same_as, facts.differences)
    assert metadata.name == type(task).__name__ == builder_module(benchmark).MTEB_TASK
    assert metadata.bibtex_citation.strip() == builder_module(benchmark)._CITATION.strip()
    assert metadata.license == builder_module(benchmark)._LICENSE
    assert metadata.revision.startswith("local-") and task.top_k == 1000  # MTEB's own depth by default
    assert type(task).metadata.dataset["path"] != metadata.dataset["path"]  # the class describes, the task reads
    hub = TASKS[benchmark]("org/export", revision="abc")
    assert hub.metadata.dataset == {"path": "org/export", "revision": "abc"}


def test_each_task_class_is_offered_once_under_its_name():
    """``mmrhub.mteb`` offers each benchmark's class by its task's name (``__all__`` lists them), the same class
    every time, and a pickled class is found again there."""
    pytest.importorskip("mteb.abstasks")
    import mmrhub.mteb
    from mmrhub.mteb import TASKS
    from mmrhub.mteb.tasks import task_class

    assert set(TASKS) == set(BENCHMARKS)
    assert sorted(task.__name__ for task in TASKS.values()) == sorted(
        set(mmrhub.mteb.__all__) - {"ExportRetrieval", "TASKS"}
    )
    for name, task in TASKS.items():
        assert getattr(mmrhub.mteb, task.__name__) is task is task_class(BENCHMARKS[name])
        assert pickle.loads(pickle.dumps(task)) is task
        assert issubclass(task, mmrhub.mteb.ExportRetrieval) and task.benchmark_name == name
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchRetrieval'"):
        mmrhub.mteb.NoSuchRetrieval
