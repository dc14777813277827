"""The pipeline with a multi-vector encoder (``--preset preflmr``), on the bundled M2KR sample, CPU only: a small
fake model behind PreFLMR's interface (tests/helpers/_fake_tokens.py), so the wiring is tested apart from the model."""

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
    # passages are read as text alone: the record lists the queries' images as inputs, not the corpus'
    assert "images" not in meta["data"]["corpus"] and len(meta["data"]["queries"]["images"]) == 30


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
    with pytest.raises(ValueError, match=r"^--search faiss"):  # said before the model is looked for
        preflmr(tmp_path, tmp_path / "no-such-model", "--no-cache", "--search", "faiss")
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
    launcher.write_text(LAUNCHER.format(tests=str(ROOT / "tests" / "helpers"), script=str(script)))
    options = ["m2kr", "--preset", "preflmr", "--model", str(model_dir), "--top-k", "7", "--batch-size", "8"]
    options += ["--num-workers", "0", "--no-cache", "--no-eval"]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    single, double, stdout = one_and_two_processes(launcher, options, env, tmp_path)
    assert "(2 process(es))" in stdout
    assert double.read_bytes() == single.read_bytes()
    assert sys.executable


def test_baseline_m2kr_paper_prints_the_card_row_beside_ours_with_what_differs(fake, tmp_path, model_dir, capsys):
    from mmrhub.cli import main

    runs = tmp_path / "runs"
    argv = ["baseline", "m2kr", "--paper", "--embedding-model", str(model_dir), "--output-dir", str(runs)]
    assert main([*argv, "--num-workers", "0", "--no-cache"]) == 0
    assert sorted(p.name for p in runs.iterdir()) == [
        "m2kr_fake-model_top50.json",
        "m2kr_fake-model_top50.json.meta.json",
    ]
    out = capsys.readouterr().out
    meta = json.loads((runs / "m2kr_fake-model_top50.json.meta.json").read_text())
    assert meta["preset"] == "preflmr" and meta["backend"] == "preflmr"
    lines = out.splitlines()
    at = lines.index("Beside the M2KR challenge card's row:")
    assert lines[at + 1] == "| System | Recall@1 | Recall@3 | Recall@5 | Recall-mean |"
    assert lines[at + 4] == "| PreFLMR ViT-G (the M2KR challenge card) | 19.5 | 34.0 | 41.2 | 31.6 |"
    ours = lines[at + 3].split(" | ")
    assert ours[0] == "| fake-model (ours)"
    # our row is the run's own scores, as the table above prints them
    (scored,) = [line for line in lines[:at] if line.startswith("| fake-model |")]
    assert scored.split(" | ")[1:] == ours[1:]
    difference = [float(cell.strip(" |")) for cell in lines[at + 5].split(" | ")[1:]]
    assert difference == pytest.approx(
        [float(cell.strip(" |")) - card for cell, card in zip(ours[1:], (19.5, 34.0, 41.2, 31.6))]
    )
    differs = lines[lines.index("What differs from the authors' run:") + 1 :]
    assert differs[0].startswith(
        "- Search: ours scores every passage exactly (MaxSim); the authors search an approximate"
    )
    assert (
        "- Passage vectors in torch.float32: half on a GPU as the authors cast them (modeling_flmr.py:1338-1339), "
        "float32 on CPU." in differs
    )
    assert (
        "- Image processor: the config's vision_model_version (the vision tower's own); the authors' example loads "
        "the query image processor it is named (--image_processor_name, example_use_preflmr.py:250)." in differs
    )
    (measure,) = [line for line in differs if line.startswith("- Measure:")]
    assert "gives each query the share of its positives found in the top k" in measure
    assert "`--variants strict` scores all-or-nothing (1 only when every positive is in the top k)" in measure
    assert not any(line.startswith("- Model in") for line in differs)  # float32 on CPU, as theirs


def test_baseline_differences_name_the_model_dtype_and_a_given_processor():
    from mmrhub.benchmarks import M2KR
    from mmrhub.scoring.published_table import baseline_differences

    record = {
        "model": {"dtype": "torch.bfloat16"},
        "search": {"passage_dtype": "torch.float16"},
        "settings": {"image_processor": "openai/clip-vit-large-patch14"},
    }
    lines = baseline_differences(M2KR.published_baseline, record)
    assert lines[:3] == list(M2KR.published_baseline.differences)
    assert lines[3:] == [
        "Model in torch.bfloat16 (--dtype); the authors' example loads float32 (example_use_preflmr.py:245-249): "
        "--dtype float32 runs theirs.",
        "Passage vectors in torch.float16: half on a GPU as the authors cast them (modeling_flmr.py:1338-1339), "
        "float32 on CPU.",
        "Image processor: openai/clip-vit-large-patch14 (given); the authors' example loads the query image "
        "processor it is named (--image_processor_name, example_use_preflmr.py:250).",
    ]


def test_baseline_m2kr_paper_reranks_only_when_a_reranker_is_given(tmp_path):
    import argparse

    from mmrhub.commands import baseline

    parser = argparse.ArgumentParser()
    baseline.register(parser.add_subparsers())
    retrieve_options, rerank_options = baseline.pipeline_options(parser.parse_args(["baseline", "m2kr", "--paper"]))
    assert retrieve_options.model == "LinWeizheDragon/PreFLMR_ViT-G" and retrieve_options.settings.preset == "preflmr"
    assert rerank_options is None
    args = parser.parse_args(
        [
            "baseline",
            "m2kr",
            "--paper",
            "--reranker-model",
            "Qwen/Qwen3-VL-Reranker-8B",
            "--embedding-image-processor",
            "openai/clip-vit-large-patch14",
        ]
    )
    retrieve_options, rerank_options = baseline.pipeline_options(args)
    assert retrieve_options.settings.image_processor == "openai/clip-vit-large-patch14"
    assert rerank_options.model == "Qwen/Qwen3-VL-Reranker-8B" and rerank_options.settings.preset == "qwen3-vl-reranker"
    assert rerank_options.candidates == str(retrieve_options.output.path)
    # PreFLMR in float32 as its authors load it; the reranker keeps --dtype (auto: bfloat16 on CUDA, as QwenLM's)
    assert (retrieve_options.runtime.dtype, rerank_options.runtime.dtype) == ("float32", "auto")
    asked = parser.parse_args(["baseline", "m2kr", "--paper", "--dtype", "bfloat16"])
    assert baseline.pipeline_options(asked)[0].runtime.dtype == "bfloat16"
    assert rerank_options.settings.resolve(rerank_options.model, "reranker").row_instructions  # each query's own
    args = parser.parse_args(["baseline", "m2kr", "--paper", "--reranker-model", "R", "--reranker-default-instruction"])
    _, rerank_options = baseline.pipeline_options(args)
    assert rerank_options.settings.default_instruction is True
    assert not rerank_options.settings.resolve(rerank_options.model, "reranker").row_instructions


@pytest.mark.slow  # the tiny PreFLMR, three runs of the M2KR sample
def test_the_tiny_preflmr_run_is_remade_byte_for_byte_from_the_cache_and_by_rerun(tmp_path, capsys):
    from tiny_models import PREFLMR_PROCESSOR
    from tiny_models import build_preflmr

    from mmrhub.cli import main

    checkpoint = build_preflmr(tmp_path / "PreFLMR-tiny")
    options = ["--image-processor", checkpoint / PREFLMR_PROCESSOR, "--cache-dir", tmp_path / "cache"]
    first, _, _ = retrieve(tmp_path, "m2kr", "--model", checkpoint, "--top-k", 10, *options, name="first.json")
    second, _, stats = retrieve(tmp_path, "m2kr", "--model", checkpoint, "--top-k", 10, *options, name="second.json")
    assert stats["phases"]["embed corpus"] == {"items": 0, "cached": 300}
    assert second.read_bytes() == first.read_bytes()
    meta = json.loads((tmp_path / "first.json.meta.json").read_text())
    assert (meta["preset"], meta["backend"]) == ("preflmr", "preflmr")  # from the folder's name
    assert meta["search"]["passage_dtype"] == "torch.float32" and meta["search"]["kept_tokens"] > 300
    capsys.readouterr()
    assert main(["rerun", str(tmp_path / "first.json.meta.json"), "--no-eval"]) == 0
    assert "The repeated run is identical to the recorded one, byte for byte." in capsys.readouterr().out


def test_the_token_cache_round_trips_and_refuses_what_it_cannot_vouch_for(tmp_path):
    import torch

    from mmrhub.retrieve.late_interaction.maxsim import pack
    from mmrhub.retrieve.late_interaction.tokens import TokenCache

    identity = {"model": "m", "skip_ids": (1, 2)}  # a tuple: read back from JSON as a list
    kept = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]]).bool()
    packed = pack(torch.randn(3, 4, 8), kept, dtype=torch.float16)  # as on a GPU
    assert TokenCache(tmp_path, identity, "data", 3).save(packed)
    loaded = TokenCache(tmp_path, identity, "data", 3).load()
    assert loaded.vectors.dtype == torch.float16 and torch.equal(loaded.vectors, packed.vectors)
    assert loaded.offsets.tolist() == [0, 2, 3, 7]
    assert TokenCache(tmp_path, {**identity, "model": "other"}, "data", 3).load() is None
    assert TokenCache(tmp_path, identity, "other data", 3).load() is None
    cache = TokenCache(tmp_path, identity, "data", 3)
    (cache.folder / "offsets.npy").write_bytes(b"damaged")
    assert cache.load() is None


def test_the_preflmr_preset_runs_float32_as_its_authors_unless_told():
    """--dtype auto takes the preset's float32 (example_use_preflmr.py:245-249) on a GPU too; other presets and no
    preset keep bfloat16 there; a dtype given wins."""
    import torch

    from mmrhub.retrieve.distributed import resolve_dtype
    from mmrhub.retrieve.presets import resolve

    cuda = torch.device("cuda")
    preflmr = resolve("LinWeizheDragon/PreFLMR_ViT-G", None, "embedding")
    assert preflmr.dtype == "float32" and preflmr.settings()["sources"]["dtype"].startswith("FE:245-249")
    assert resolve_dtype("auto", cuda, preflmr.dtype) == torch.float32
    assert resolve_dtype("bfloat16", cuda, preflmr.dtype) == torch.bfloat16
    qwen = resolve("Qwen/Qwen3-VL-Embedding-2B", None, "embedding")
    assert qwen.dtype is None and resolve_dtype("auto", cuda, qwen.dtype) == torch.bfloat16
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
