"""The pipeline with a multi-vector encoder (``--preset preflmr``), on the bundled M2KR sample, CPU only: a small
fake model behind PreFLMR's interface (tests/_fake_tokens.py), so the wiring is tested apart from the model."""

import json
import os
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("datasets")

import _fake_tokens  # noqa: E402
from _paths import ROOT  # noqa: E402
from _retrieve_helpers import one_and_two_processes  # noqa: E402
from _retrieve_helpers import retrieve  # noqa: E402

from mmrhub.benchmarks import M2KR  # noqa: E402
from mmrhub.retrieve.data_loading import Items  # noqa: E402
from mmrhub.retrieve.data_loading import load_side  # noqa: E402
from mmrhub.retrieve.options import DataOptions  # noqa: E402


@pytest.fixture
def fake(monkeypatch):
    _fake_tokens.install(monkeypatch)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "fake-model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "flmr"}')
    return folder


@pytest.fixture(scope="module")
def processor_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("processors") / "clip-processor"
    folder.mkdir()
    (folder / "preprocessor_config.json").write_text('{"crop_size": 224}')
    return folder


@pytest.fixture(scope="module")
def expected():
    """(query ids, corpus ids, every MaxSim) of the fake's vectors, computed apart from the pipeline."""
    data = DataOptions(M2KR)
    queries, corpus = load_side(data, "queries"), load_side(data, "corpus")
    query_rows = [
        Items(queries.dataset, queries.table, "ignore", instructions=True)[i] for i in range(len(queries.ids))
    ]
    corpus_rows = [Items(corpus.dataset, corpus.table, images=False)[i] for i in range(len(corpus.ids))]
    return queries.ids, corpus.ids, _fake_tokens.brute_force(query_rows, corpus_rows)


def preflmr(tmp_path, model_dir, *options, name="run.json"):
    return retrieve(tmp_path, "m2kr", "--preset", "preflmr", "--model", model_dir, "--top-k", 7, *options, name=name)


def test_the_run_is_the_exact_maxsim_top_k_of_every_query(fake, tmp_path, model_dir, expected, capsys):
    path, run, _ = preflmr(tmp_path, model_dir, "--no-cache", "--batch-size", 4)
    query_ids, corpus_ids, scores = expected
    assert [entry["qid"] for entry in run] == list(query_ids)
    for entry, row in zip(run, scores):
        order = np.lexsort((np.arange(len(row)), -row))[:7]
        assert [r["did"] for r in entry["ranked"]] == [corpus_ids[i] for i in order]
        np.testing.assert_allclose([r["score"] for r in entry["ranked"]], row[order], rtol=1e-5)
    out = capsys.readouterr().out
    assert "[embed queries] each query's instruction: its own 'instruction' (the preset's)" in out
    assert "[embed corpus] text only: no image read" in out
    assert "exact MaxSim top-7 on cpu, passages in torch.float32" in out


def test_the_record_says_how_it_searched_and_with_what(fake, tmp_path, model_dir, processor_dir):
    path, _, _ = preflmr(tmp_path, model_dir, "--no-cache", "--image-processor", processor_dir)
    meta = json.loads((tmp_path / "run.json.meta.json").read_text())
    assert meta["preset"] == "preflmr" and meta["backend"] == "preflmr"
    assert meta["options"]["settings"]["image_processor"] == str(processor_dir)
    assert meta["settings"]["image_processor"] == str(processor_dir)
    assert meta["settings"]["sources"]["passage_dtype"].startswith("FM:1338-1339")
    assert meta["model"]["image_processor"]["name"] == "clip-processor"
    assert meta["model"]["passage_dtype"] == "torch.float32"
    assert meta["search"]["passage_dtype"] == "torch.float32"
    assert meta["search"]["search"].startswith("exact MaxSim over every passage")
    assert meta["search"]["passage_dtype_source"].startswith("LinWeizheDragon/FLMR flmr/models/flmr/modeling_flmr.py")


def test_the_packed_corpus_is_cached_and_keyed_on_the_image_processor(fake, tmp_path, model_dir, processor_dir, capsys):
    cache = tmp_path / "cache"
    first, _, _ = preflmr(tmp_path, model_dir, "--cache-dir", cache, name="first.json")
    assert "[embed corpus] cached in" in capsys.readouterr().out
    second, _, stats = preflmr(tmp_path, model_dir, "--cache-dir", cache, name="second.json")
    assert "[embed corpus] 300 embeddings reused from" in capsys.readouterr().out
    assert stats["phases"]["embed corpus"] == {"items": 0, "cached": 300}
    assert second.read_bytes() == first.read_bytes()
    (entry,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert sorted(p.name for p in entry.iterdir()) == ["entry.json", "offsets.npy", "tokens.npy"]
    assert np.load(entry / "offsets.npy")[-1] == len(np.load(entry / "tokens.npy"))
    preflmr(tmp_path, model_dir, "--cache-dir", cache, "--image-processor", processor_dir, name="third.json")
    assert "cached in" in capsys.readouterr().out  # another processor: another entry
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 2


def test_image_processor_is_refused_for_other_presets(tmp_path, processor_dir):
    with pytest.raises(ValueError, match=r"^--image-processor is for PreFLMR models \(--preset preflmr\); "):
        retrieve(tmp_path, "m2kr", "--preset", "chinese-clip", "--image-processor", processor_dir)


def test_a_missing_image_processor_folder_is_named(fake, tmp_path, model_dir):
    with pytest.raises(FileNotFoundError, match="--image-processor"):
        preflmr(tmp_path, model_dir, "--image-processor", tmp_path / "nowhere", "--no-cache")


def test_candidates_and_faiss_are_refused_in_one_line(fake, tmp_path, model_dir):
    with pytest.raises(ValueError, match=r"^--search faiss: PreFLMR searches with exact MaxSim"):
        preflmr(tmp_path, model_dir, "--no-cache", "--search", "faiss")
    with pytest.raises(ValueError, match=r"^--candidates: PreFLMR ranks the whole corpus \(exact MaxSim\)"):
        preflmr(
            tmp_path, model_dir, "--no-cache", "--candidates", M2KR.data_folder(None) + "/baseline/simulated_top5.json"
        )


@pytest.mark.parametrize(
    "option, value",
    [("--max-length", "64"), ("--query-instruction", "Find it."), ("--max-pixels", "1000")],
)
def test_settings_preflmr_would_ignore_are_refused(fake, tmp_path, model_dir, option, value):
    with pytest.raises(ValueError, match=rf"^{option} .*not a PreFLMR setting; leave it out\.$"):
        preflmr(tmp_path, model_dir, "--no-cache", option, value)


def test_rerun_repeats_the_run_byte_for_byte_with_its_image_processor(fake, tmp_path, model_dir, processor_dir, capsys):
    from mmrhub.cli import main

    path, _, _ = preflmr(tmp_path, model_dir, "--no-cache", "--image-processor", processor_dir)
    capsys.readouterr()
    assert main(["rerun", str(tmp_path / "run.json.meta.json"), "--no-eval"]) == 0
    out = capsys.readouterr().out
    assert "The repeated run is identical to the recorded one, byte for byte." in out
    assert (tmp_path / "run.rerun.json").read_bytes() == path.read_bytes()
    repeated = json.loads((tmp_path / "run.rerun.json.meta.json").read_text())
    assert repeated["settings"]["image_processor"] == str(processor_dir)


def test_rerun_refuses_an_image_processor_the_command_line_refuses(fake, tmp_path, model_dir, processor_dir, capsys):
    from mmrhub.cli import main

    preflmr(tmp_path, model_dir, "--no-cache", "--image-processor", processor_dir)
    meta_path = tmp_path / "run.json.meta.json"
    meta = json.loads(meta_path.read_text())
    meta["options"]["settings"]["preset"] = "chinese-clip"
    meta_path.write_text(json.dumps(meta))
    capsys.readouterr()
    assert main(["rerun", str(meta_path), "--no-eval"]) == 1
    assert (
        "mmrhub rerun: error: --image-processor is for PreFLMR models (--preset preflmr); " in capsys.readouterr().err
    )
    assert not (tmp_path / "run.rerun.json").exists()


LAUNCHER = """import runpy, sys
sys.path.insert(0, {tests!r})
import _fake_tokens
_fake_tokens.install()
sys.argv[0] = {script!r}
runpy.run_path({script!r}, run_name="__main__")
"""


@pytest.mark.slow
def test_two_processes_write_the_run_one_process_writes(tmp_path, model_dir):
    launcher = tmp_path / "launch.py"
    script = ROOT / "scripts" / "embed_retrieve.py"
    launcher.write_text(LAUNCHER.format(tests=str(ROOT / "tests"), script=str(script)))
    options = ["m2kr", "--preset", "preflmr", "--model", str(model_dir), "--top-k", "7", "--batch-size", "8"]
    options += ["--num-workers", "0", "--no-cache", "--no-eval"]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    single, double, stdout = one_and_two_processes(launcher, options, env, tmp_path)
    assert "(2 process(es))" in stdout
    assert double.read_bytes() == single.read_bytes()
    assert sys.executable
