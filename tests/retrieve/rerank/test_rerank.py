"""``mmrhub rerank`` end to end on CPU: a tiny random generative reranker (LLaVA: CLIP vision + Qwen2 text, no
torchvision) saved as a sentence-transformers CrossEncoder and loaded through --model PATH, the bundled samples."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from _mipr_helpers import read_jsonl
from _paths import MIPR_EMBEDDING
from _paths import MIPR_SAMPLE
from _paths import ROOT
from _retrieve_helpers import one_and_two_processes
from tiny_models import build_tiny_llava_reranker  # noqa: E402

SCRIPT = ROOT / "scripts" / "rerank.py"
BASELINE = MIPR_EMBEDDING
TOP_N = 4


@pytest.fixture(scope="module")
def reranker(built):
    return built(build_tiny_llava_reranker, "reranker")


def rerank(tmp_path, *options, name="run.json"):
    """Run the script in-process; return the parsed run and per-phase stats."""
    from mmrhub.commands.rerank import build_parser
    from mmrhub.commands.rerank import rerank_options
    from mmrhub.retrieve.rerank.pipeline import run

    output, stats = tmp_path / name, tmp_path / f"{name}.stats.json"
    argv = [*map(str, options), "--output", str(output), "--stats-json", str(stats), "--num-workers", "0"]
    assert run(rerank_options(build_parser().parse_args(argv))) == 0
    return json.loads(output.read_text()), json.loads(stats.read_text())


def sample_options(reranker, tmp_path, *extra):
    return (
        "mipr",
        "--candidates",
        BASELINE,
        "--model",
        reranker,
        "--top-n",
        TOP_N,
        "--chunk-queries",
        8,
        "--cache-dir",
        tmp_path / "cache",
        *extra,
    )


def test_pools_kept_and_head_ordered_by_the_model_scores(tmp_path, reranker, capsys):
    from PIL import Image
    from sentence_transformers import CrossEncoder

    run, stats = rerank(tmp_path, *sample_options(reranker, tmp_path))
    baseline = {entry["qid"]: [r["did"] for r in entry["ranked"]] for entry in json.loads(BASELINE.read_text())}
    assert [entry["qid"] for entry in run] == [row["idx"] for row in read_jsonl(MIPR_SAMPLE / "mipr_query.jsonl")]
    assert stats["phases"]["rerank"]["items"] == TOP_N * len(run)
    changed = 0
    for entry in run:
        pool, ranked = baseline[entry["qid"]], [r["did"] for r in entry["ranked"]]
        assert sorted(ranked[:TOP_N]) == sorted(pool[:TOP_N]) and ranked[TOP_N:] == pool[TOP_N:]
        scores = [r["score"] for r in entry["ranked"]]
        assert scores[:TOP_N] == sorted(scores[:TOP_N], reverse=True) and scores[TOP_N:] == [None] * (len(pool) - TOP_N)
        changed += ranked != pool
    assert changed, "random scores should reorder some pools"

    # The scores are the model's own for (query image + question, product image + title).
    query = read_jsonl(MIPR_SAMPLE / "mipr_query.jsonl")[0]
    products = {row["item_id"]: row for row in read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")}
    image = lambda sub, name: Image.open(MIPR_SAMPLE / "images" / sub / name).convert("RGB")  # noqa: E731
    query_input = {"image": image("query_images", query["image_url"]), "text": query["query"]}
    head = baseline[query["idx"]][:TOP_N]
    pairs = [
        (query_input, {"image": image("product_images", products[did]["pict_url"]), "text": products[did]["title"]})
        for did in head
    ]
    expected = dict(zip(head, CrossEncoder(str(reranker), device="cpu").predict(pairs, batch_size=1).tolist()))
    got = {r["did"]: r["score"] for r in run[0]["ranked"][:TOP_N]}
    assert got == pytest.approx(expected, abs=1e-4)
    out = capsys.readouterr().out
    assert "pairs/s" in out and "| System | nDCG@10 |" in out and "_Bundled MIPR sample (27 queries)" in out


def test_ties_keep_the_baseline_order():
    from mmrhub.retrieve.rerank.pairs import reranked

    items, scores = reranked(["a", "b", "c", "d", "e"], [0.5, 0.9, 0.5, 0.5])
    assert items == ["b", "a", "c", "d", "e"]
    assert scores == [0.9, 0.5, 0.5, 0.5, None]


@pytest.mark.slow  # three reranks of the sample
def test_interrupted_rerank_resumes_from_the_cached_chunks(tmp_path, reranker, monkeypatch, capsys):
    from mmrhub.retrieve.rerank.model import Reranker

    whole, _ = rerank(tmp_path, *sample_options(reranker, tmp_path, "--no-cache"), name="whole.json")
    score, calls = Reranker.score, []

    def interrupted(self, pairs):
        calls.append(len(pairs))
        if len(calls) == 5:  # chunks are 8 queries x 4 pairs = 2 batches of 16: two chunks are done by now
            raise KeyboardInterrupt
        return score(self, pairs)

    monkeypatch.setattr(Reranker, "score", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rerank(tmp_path, *sample_options(reranker, tmp_path), name="first.json")
    assert len(list((tmp_path / "cache").glob("*/chunks/*/scores.npy"))) == 2
    assert not list((tmp_path / "cache").glob("*/chunks/.*"))  # no folder left half-written
    monkeypatch.setattr(Reranker, "score", score)
    resumed, stats = rerank(tmp_path, *sample_options(reranker, tmp_path), name="resumed.json")
    assert stats["phases"]["rerank"]["items"] == TOP_N * len(whole) - 2 * 8 * TOP_N
    assert "64 pair scores reused" in capsys.readouterr().out
    assert resumed == whole
    # An option that changes the scores changes the key: nothing is reused.
    _, other = rerank(tmp_path, *sample_options(reranker, tmp_path, "--max-length", 2048), name="other.json")
    assert other["phases"]["rerank"]["items"] == TOP_N * len(whole)


@pytest.mark.slow
def test_two_processes_give_the_same_run_as_one(tmp_path, reranker):
    """torchrun, gloo on CPU: each rank scores a contiguous slice of the chunks; batches never cross a chunk, so
    every pair is scored in the same batch and the runs match byte for byte."""
    options = [
        "mipr",
        "--candidates",
        str(BASELINE),
        "--model",
        str(reranker),
        "--top-n",
        "2",
        "--chunk-queries",
        "4",
        "--num-workers",
        "1",
        "--no-cache",
        "--no-eval",
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    single, double, stdout = one_and_two_processes(SCRIPT, options, env, tmp_path)
    assert "(2 process(es)" in stdout
    assert double.read_bytes() == single.read_bytes()


def test_commands_register_without_importing_torch():
    code = (
        "import sys, argparse; from mmrhub.commands import rerank, baseline; p = argparse.ArgumentParser(); "
        "s = p.add_subparsers(); rerank.register(s); baseline.register(s); "
        "a = p.parse_args(['rerank', 'mipr', '--candidates', 'run.json', '--top-n', '10']); "
        "assert a.func.__module__ == 'mmrhub.commands.rerank' and a.top_n == 10; "
        "b = p.parse_args(['baseline', 'm2kr', '--reranker-model', 'x']); "
        "assert b.func.__module__ == 'mmrhub.commands.baseline' and b.top_k == 50; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.slow
def test_the_run_says_how_it_was_made(tmp_path, reranker, capsys):
    instruction = "Find what solves the need."
    rerank(tmp_path, *sample_options(reranker, tmp_path, "--prompt", instruction, "--max-length", 2000))
    meta = json.loads((tmp_path / "run.json.meta.json").read_text())
    assert (meta["command"], meta["run"], meta["preset"]) == ("rerank", "run.json", "none")
    assert (meta["candidates"], meta["device"]) == (str(BASELINE), "cpu")
    assert meta["settings"]["query_instruction"] == instruction and meta["settings"]["max_length"] == 2000
    assert meta["model"]["prompt"] == instruction and meta["model"]["dtype"] == "torch.float32"
    assert meta["model"]["activation"] == "Sigmoid"
    # a local folder is identified by a hash of its files (tests/records/test_provenance.py)
    assert meta["model"]["model"]["name"] == "model" and re.fullmatch("[0-9a-f]{64}", meta["model"]["model"]["files"])
    import sentence_transformers
    import torch

    versions = meta["versions"]
    assert (versions["torch"], versions["sentence-transformers"]) == (
        torch.__version__,
        sentence_transformers.__version__,
    )
    # a LLaVA reranker cannot continue Qwen3-VL's positions: every pair runs whole, and the record says why
    assert meta["options"]["shared_prefix"] is True
    because = "llava models run whole pairs (the shared prefix is Qwen3-VL's)"
    assert meta["pairs"] == {
        "path": "whole pairs",
        "whole_pairs_because": because,
        "scored": {because: 27 * TOP_N},
        "cached": 0,
    }
    out = capsys.readouterr().out
    assert f"{reranker} (preset: none)" in out and f"[rerank] whole pairs: {because}" in out


def copy_of(reranker, folder):
    return Path(shutil.copytree(reranker, folder))


def test_a_chat_template_json_beside_additional_templates_is_refused_with_the_fix(tmp_path, reranker):
    model = copy_of(reranker, tmp_path / "conflict")
    (model / "additional_chat_templates").mkdir()
    (model / "additional_chat_templates" / "reranker.jinja").write_text((model / "chat_template.jinja").read_text())
    (model / "chat_template.json").write_text(
        json.dumps({"chat_template": (model / "chat_template.jinja").read_text()})
    )
    with pytest.raises(ValueError) as raised:
        rerank(tmp_path, *sample_options(model, tmp_path))
    assert str(raised.value) == (
        f"--model {model}: chat_template.json cannot be read beside additional_chat_templates/ (transformers 5); "
        "rename its template to chat_template.jinja (the JSON file's chat_template value) and remove "
        "chat_template.json."
    )


def test_a_reranker_without_a_chat_template_is_refused_with_the_fix(tmp_path, reranker):
    model = copy_of(reranker, tmp_path / "templateless")
    (model / "chat_template.jinja").unlink()
    with pytest.raises(ValueError, match=f"^--model {model}: its processor has no chat template; add chat_template"):
        rerank(tmp_path, *sample_options(model, tmp_path))


def test_a_pixel_budget_for_an_image_processor_without_one_is_refused(tmp_path, reranker):
    with pytest.raises(ValueError) as raised:
        rerank(tmp_path, *sample_options(reranker, tmp_path, "--max-pixels", 4096))
    assert str(raised.value) == (
        f"--min-pixels / --max-pixels: {reranker}'s image processor (LlavaImageProcessorPil) resizes to a size of its "
        "own; pixel budgets apply to Qwen-VL models. Leave both out."
    )


def test_a_reranker_whose_head_would_be_newly_initialised_is_refused(tmp_path, reranker, request):
    import transformers
    from safetensors.torch import load_file
    from safetensors.torch import save_file

    model = copy_of(reranker, tmp_path / "headless")
    weights = load_file(model / "model.safetensors")
    head = [key for key in weights if key.endswith("lm_head.weight")]
    assert len(head) == 1
    save_file({key: value for key, value in weights.items() if key not in head}, model / "model.safetensors")
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # as TRANSFORMERS_VERBOSITY=error would: the check still sees it
    request.addfinalizer(lambda: transformers.logging.set_verbosity(verbosity))
    with pytest.raises(ValueError) as raised:
        rerank(tmp_path, *sample_options(model, tmp_path))
    assert str(raised.value) == (
        f"--model {model}: its checkpoint lacks lm_head.weight, so they would be newly initialised (random) and every "
        "score meaningless; use a CrossEncoder checkpoint that holds its scoring head (e.g. Qwen/Qwen3-VL-Reranker-2B)."
    )
