"""The MTEB exports load with mteb 1.x's MIEB loader (``AbsTaskAny2AnyRetrieval``'s ``HFDataLoader``), run with
the interpreter named by MMRHUB_MTEB1_PYTHON (a Python with ``mteb<2``, ``datasets`` and ``pillow``)."""

import json
import os
import subprocess

import pytest
from _export_helpers import EXPECTED

PYTHON = os.environ.get("MMRHUB_MTEB1_PYTHON")
pytestmark = pytest.mark.skipif(not PYTHON, reason="set MMRHUB_MTEB1_PYTHON to a Python with mteb<2")

LOAD = """
import json, sys
import mteb
from mteb.abstasks.Image.AbsTaskAny2AnyRetrieval import HFDataLoader
corpus, queries, qrels = HFDataLoader(hf_repo=sys.argv[1]).load()  # split "test", MIEB tasks' default
print(json.dumps({
    "version": mteb.__version__,
    "corpus": corpus["id"],
    "queries": queries["id"],
    "modalities": sorted(set(corpus["modality"]) | set(queries["modality"])),
    "qrels": {qid: dict(docs) for qid, docs in qrels.items()},
    "has_image": queries.features["image"].__class__.__name__ == "Image",
}))
"""


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_mteb1_loader_reads_the_export(exported, benchmark):  # noqa: F811 (fixture)
    out = exported(benchmark, "mteb")
    result = subprocess.run([PYTHON, "-c", LOAD, str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    corpus_ids, _, query_ids, _, judgments = EXPECTED[benchmark]()
    assert loaded["version"].startswith("1.")
    assert loaded["corpus"] == corpus_ids
    assert loaded["queries"] == [qid for qid in query_ids if judgments.get(qid)]
    assert loaded["qrels"] == {qid: docs for qid, docs in judgments.items() if docs}
    assert loaded["modalities"] == ["image,text"] and loaded["has_image"]
