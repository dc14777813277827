"""End-to-end: tiny random models loaded through --model PATH, the bundled samples, CPU only."""

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _mipr_helpers import read_jsonl
from _paths import MIPR_EMBEDDING
from _paths import MIPR_SAMPLE
from _paths import ROOT
from _retrieve_helpers import IMAGE_ONLY_QUERY
from _retrieve_helpers import SELF_QUERY
from _retrieve_helpers import one_and_two_processes
from _retrieve_helpers import retrieve
from _retrieve_helpers import top
from tiny_models import build_tiny_chinese_clip  # noqa: E402
from tiny_models import build_tiny_sentence_transformer  # noqa: E402

from mmrhub.benchmarks import M2KR  # noqa: E402
from mmrhub.benchmarks import MIPR  # noqa: E402
from mmrhub.scoring.request import ScoringRequest  # noqa: E402
from mmrhub.scoring.score import read_valid_run  # noqa: E402

SCRIPT = ROOT / "scripts" / "embed_retrieve.py"


@pytest.fixture(scope="module")
def sample_texts():
    texts = [row["title"] for row in read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")]
    return texts + [row["query"] for row in read_jsonl(MIPR_SAMPLE / "mipr_query.jsonl")]


@pytest.fixture(scope="module")
def clip_model(built, sample_texts):
    return built(build_tiny_chinese_clip, "clip", sample_texts)


@pytest.fixture(scope="module")
def st_model(built, sample_texts):
    pytest.importorskip("sentence_transformers")
    return built(build_tiny_sentence_transformer, "st", sample_texts)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["transformers", "sentence-transformers"])
def test_run_is_valid_and_a_corpus_item_finds_itself(backend, request, tmp_path, mipr_dir, capsys):
    model = request.getfixturevalue("clip_model" if backend == "transformers" else "st_model")
    path, run, _ = retrieve(
        tmp_path,
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        backend,
        "--model",
        model,
        "--top-k",
        20,
        "--cache-dir",
        tmp_path / "cache",
    )
    truth = MIPR.read_truth(mipr_dir["dir"])
    checked, _ = read_valid_run(
        ScoringRequest(MIPR, str(mipr_dir["dir"])), truth, path
    )  # raises unless every query is there once, with corpus ids only
    every_query = truth.query_ids.to_pylist() + truth.unjudged_query_ids.to_pylist()
    assert sorted(checked.query_ids.to_pylist()) == sorted(every_query)
    assert len(run) == mipr_dir["num_queries"] == 29
    assert all(len(entry["ranked"]) == 20 for entry in run)
    assert top(run, SELF_QUERY)[0]["did"] == mipr_dir["self_item"]
    assert top(run, SELF_QUERY)[0]["score"] == pytest.approx(1.0, abs=1e-5)
    image_only = top(run, IMAGE_ONLY_QUERY)
    assert [r["score"] for r in image_only] == sorted((r["score"] for r in image_only), reverse=True)
    out = capsys.readouterr().out
    assert "CUDA is not available: running on CPU" in out
    assert "| System | nDCG@10 | R-L1@10 | Hit-L1@1 | Hit-L1@10 | SC-R-L1@10 | SC-R-L1@10* |" in out
    assert "\n| run | " in out


def test_image_only_query_is_the_image_vector(tmp_path, mipr_dir, clip_model):
    """An empty question is not encoded as text: the query vector is the normalised image vector."""
    import numpy as np
    import torch
    from PIL import Image
    from transformers import AutoModel
    from transformers import AutoProcessor

    _, run, _ = retrieve(
        tmp_path,
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        "transformers",
        "--model",
        clip_model,
        "--top-k",
        5,
        "--cache-dir",
        tmp_path / "cache",
        "--no-eval",
    )
    (cached,) = (tmp_path / "cache").glob("*/embeddings.npy")
    corpus = np.load(cached)
    corpus_ids = [row["item_id"] for row in read_jsonl(mipr_dir["dir"] / "mipr_corpus.jsonl")]
    image_name = next(
        q["image_url"] for q in read_jsonl(mipr_dir["dir"] / "mipr_query.jsonl") if q["idx"] == IMAGE_ONLY_QUERY
    )
    model, processor = AutoModel.from_pretrained(clip_model), AutoProcessor.from_pretrained(clip_model)
    image = Image.open(mipr_dir["dir"] / "images" / "query_images" / image_name).convert("RGB")
    with torch.inference_mode():
        vector = model.get_image_features(**processor(images=[image], return_tensors="pt")).pooler_output
    expected = corpus @ torch.nn.functional.normalize(vector, dim=-1)[0].numpy()
    ranked = top(run, IMAGE_ONLY_QUERY)
    got = {r["did"]: r["score"] for r in ranked}
    np.testing.assert_allclose([expected[corpus_ids.index(did)] for did in got], list(got.values()), atol=1e-5)
    np.testing.assert_allclose(list(got.values()), np.sort(expected)[::-1][:5], atol=1e-5)


@pytest.mark.slow
def test_second_run_reuses_cached_corpus_embeddings(tmp_path, mipr_dir, clip_model, capsys):
    options = (
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        "transformers",
        "--model",
        clip_model,
        "--cache-dir",
        tmp_path / "cache",
        "--no-eval",
    )
    _, first, first_stats = retrieve(tmp_path, *options, name="first.json")
    assert first_stats["phases"]["embed corpus"]["items"] == mipr_dir["num_corpus"]
    _, second, second_stats = retrieve(tmp_path, *options, name="second.json")
    assert second_stats["phases"]["embed corpus"] == {"items": 0, "cached": mipr_dir["num_corpus"]}
    assert second_stats["phases"]["embed queries"]["items"] == mipr_dir["num_queries"]
    assert second == first
    assert "embeddings reused from" in capsys.readouterr().out
    # Options that change the vectors change the key: a new text weight embeds the corpus again.
    _, _, third_stats = retrieve(tmp_path, *options, "--text-weight", 0.3, name="third.json")
    assert third_stats["phases"]["embed corpus"]["items"] == mipr_dir["num_corpus"]


@pytest.mark.slow
def test_rerank_keeps_each_baseline_pool(tmp_path, clip_model, capsys):
    baseline = MIPR_EMBEDDING
    _, run, stats = retrieve(
        tmp_path, "mipr", "--backend", "transformers", "--model", clip_model, "--candidates", baseline, "--no-cache"
    )
    pools = {entry["qid"]: {r["did"] for r in entry["ranked"]} for entry in json.loads(baseline.read_text())}
    assert [entry["qid"] for entry in run] == [row["idx"] for row in read_jsonl(MIPR_SAMPLE / "mipr_query.jsonl")]
    for entry in run:
        assert {r["did"] for r in entry["ranked"]} == pools[entry["qid"]]
        assert len(entry["ranked"]) == len(pools[entry["qid"]])
    assert "rerank" in capsys.readouterr().out


def test_unknown_candidate_is_reported(tmp_path, clip_model):
    baseline = json.loads((MIPR_EMBEDDING).read_text())
    baseline[2]["ranked"][3]["did"] = "no-such-item"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(baseline))
    message = rf"query '{baseline[2]['qid']}' position 4 \(entry 3\): 'no-such-item' is not in the corpus"
    with pytest.raises(ValueError, match=message):
        retrieve(tmp_path, "mipr", "--backend", "transformers", "--model", clip_model, "--candidates", path)


@pytest.mark.slow
def test_m2kr_sample_with_image_only_queries(tmp_path, clip_model, capsys):
    import m2kr

    questions = m2kr.load("challenge_data")
    image_only = [qid for qid, q in zip(questions["question_id"], questions["question"]) if not q]
    assert image_only, "the M2KR sample should have image-only queries"
    path, run, _ = retrieve(
        tmp_path, "m2kr", "--backend", "transformers", "--model", clip_model, "--top-k", 5, "--no-cache"
    )
    read_valid_run(ScoringRequest(M2KR), M2KR.read_truth(M2KR.sample_dir), path)
    assert [entry["qid"] for entry in run] == list(questions["question_id"])
    assert all(len(top(run, qid)) == 5 for qid in image_only)
    out = capsys.readouterr().out
    assert "Recall@1" in out and "_Bundled M2KR sample (30 queries), not the benchmark" in out


@pytest.mark.slow
def test_two_processes_give_the_same_run_as_one(tmp_path, mipr_dir, clip_model):
    """torchrun, gloo on CPU: each rank embeds a contiguous shard; batch size 1 makes every vector bitwise
    independent of the batch it was in, so the runs must match byte for byte."""
    options = [
        "mipr",
        "--data-dir",
        str(mipr_dir["dir"]),
        "--backend",
        "transformers",
        "--model",
        str(clip_model),
        "--batch-size",
        "1",
        "--num-workers",
        "0",
        "--no-cache",
        "--no-eval",
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    single, double, stdout = one_and_two_processes(SCRIPT, options, env, tmp_path)
    assert "(2 process(es))" in stdout
    assert double.read_bytes() == single.read_bytes()


def test_cli_registers_retrieve_without_importing_torch():
    code = (
        "import sys, mmrhub.cli as cli; parser = cli.build_parser(); "
        "args = parser.parse_args(['retrieve', 'mipr', '--backend', 'transformers']); "
        "assert args.func.__module__ == 'mmrhub.commands.retrieve'; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.slow
def test_default_run_files_never_replace_another_models_run(tmp_path, clip_model, monkeypatch):
    """runs/<benchmark>_<folder name>.json: a second folder of the same name is refused, the same folder replaces
    its own run, and a file that no run of ours wrote is left alone."""
    from mmrhub.commands.retrieve import build_parser
    from mmrhub.commands.retrieve import retrieve_options
    from mmrhub.retrieve.pipeline import run

    def default_run(model):
        argv = ["mipr", "--backend", "transformers", "--model", str(model), "--top-k", "5", "--num-workers", "0"]
        return run(retrieve_options(build_parser().parse_args([*argv, "--no-eval", "--no-cache"])))

    monkeypatch.chdir(tmp_path)
    first, second = (shutil.copytree(clip_model, tmp_path / name / "clip") for name in ("a", "b"))
    assert default_run(first) == 0
    path = tmp_path / "runs" / "mipr_clip.json"
    written = path.read_bytes()
    with pytest.raises(ValueError) as raised:
        default_run(second)
    assert str(raised.value) == (
        f"runs/mipr_clip.json holds a run of {first}; give --output PATH for the run of {second}, or move that file "
        "away."
    )
    assert path.read_bytes() == written
    assert default_run(first) == 0  # its own run is replaced
    (tmp_path / "runs" / "mipr_clip.json.meta.json").unlink()
    with pytest.raises(ValueError, match="^runs/mipr_clip.json holds a file whose metadata names no model; give"):
        default_run(first)


@pytest.mark.parametrize(("backend", "model"), [("transformers", "clip_model"), ("sentence-transformers", "st_model")])
def test_a_pixel_budget_for_a_model_without_a_chat_template_is_refused(backend, model, request, tmp_path):
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.options import ModelSettings

    folder = str(request.getfixturevalue(model))
    # with --max-length too, which such a model does take: the pixel budget is still not passed over
    settings = ModelSettings(preset="none", max_pixels=4096, max_length=32).resolve(folder, "embedding")
    with pytest.raises(ValueError) as raised:
        build_encoder(backend, folder, settings)
    assert str(raised.value) == (
        f"--min-pixels / --max-pixels: {folder} takes no chat template; they apply to Qwen3-VL models."
    )


def run_retrieve(*argv):
    from mmrhub.commands.retrieve import build_parser
    from mmrhub.commands.retrieve import retrieve_options
    from mmrhub.retrieve.pipeline import run

    return run(retrieve_options(build_parser().parse_args([*map(str, argv), "--num-workers", "0"])))


def test_outputs_onto_the_data_or_the_candidates_are_refused_before_any_work(tmp_path, clip_model):
    data = tmp_path / "mipr"
    shutil.copytree(MIPR_SAMPLE, data)
    image = next((data / "images" / "query_images").iterdir())
    before = image.read_bytes()
    common = ("mipr", "--data-dir", data, "--backend", "transformers", "--model", clip_model)
    with pytest.raises(ValueError, match=rf"--output {image}: is {data / 'images'}, one of this command's inputs"):
        run_retrieve(*common, "--output", image)
    candidates = tmp_path / "pools.json"
    shutil.copy(MIPR_EMBEDDING, candidates)
    with pytest.raises(ValueError, match=rf"--stats-json {candidates}: is {candidates}, one of this command's inputs"):
        run_retrieve(*common, "--candidates", candidates, "--output", tmp_path / "run.json", "--stats-json", candidates)
    with pytest.raises(ValueError, match=rf"--output {data / 'mipr_query.jsonl'}: is "):
        run_retrieve(*common, "--output", data / "mipr_query.jsonl")
    assert image.read_bytes() == before and not (tmp_path / "run.json").exists()
