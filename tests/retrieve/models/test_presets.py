"""Reference presets: which one a model gets, the settings it records, and loading that fails loudly."""

import json

import pytest

from mmrhub.retrieve.model_loading import check_modules
from mmrhub.retrieve.model_loading import check_reachable
from mmrhub.retrieve.options import ModelSettings
from mmrhub.retrieve.presets import punctuated
from mmrhub.retrieve.presets import resolve


@pytest.mark.parametrize(
    ("model", "role", "name"),
    [
        ("Qwen/Qwen3-VL-Embedding-8B", "embedding", "qwen3-vl-embedding"),
        ("Qwen/Qwen3-VL-Reranker-2B", "reranker", "qwen3-vl-reranker"),
        ("OFA-Sys/chinese-clip-vit-large-patch14", "embedding", "chinese-clip"),
        ("LinWeizheDragon/PreFLMR_ViT-G", "embedding", "preflmr"),
        ("LinWeizheDragon/PreFLMR_ViT-L", "embedding", "preflmr"),
        ("/models/preflmr_vit-b", "embedding", "preflmr"),
        ("/models/my-folder", "embedding", "none"),
    ],
)
def test_the_preset_follows_from_the_model_id(model, role, name):
    assert resolve(model, None, role).name == name


@pytest.mark.parametrize(
    ("parent", "folder", "model_type", "name", "why"),
    [
        ("preflmr", "model", "chinese_clip", "chinese-clip", "{config}'s model_type 'chinese_clip'"),
        ("qwen3-vl-reranker-exp", "chinese-clip-vit", "clip", "chinese-clip", "the folder's name 'chinese-clip-vit'"),
        ("qwen3-vl-embedding-runs", "my-model", "clip", "none", None),
        ("chinese-clip", "PreFLMR-copy", "flmr", "preflmr", "{config}'s model_type 'flmr'"),
        ("runs", "PreFLMR-copy", "chinese_clip", "chinese-clip", "{config}'s model_type 'chinese_clip'"),
    ],
)
def test_the_preset_follows_from_the_models_own_name_or_type_never_a_parent_folder(
    tmp_path, parent, folder, model_type, name, why
):
    model = tmp_path / parent / folder
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"model_type": model_type}))
    assert resolve(str(model), None, "embedding").name == name
    said = ModelSettings().chosen_by(str(model), "embedding")
    assert said == (why.format(config=model / "config.json") if why else "no preset names this model")


def test_a_snapshot_in_huggingface_hubs_cache_is_named_by_its_repo_id(tmp_path):
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen3-VL-Embedding-2B" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    assert resolve(str(snapshot), None, "embedding").name == "qwen3-vl-embedding"
    assert ModelSettings().chosen_by(str(snapshot), "embedding") == (
        "the repo id of the cached snapshot 'Qwen/Qwen3-VL-Embedding-2B'"
    )


def test_a_preset_of_the_other_command_says_what_chose_it(tmp_path):
    model = tmp_path / "Qwen3-VL-Reranker-mine"
    model.mkdir()
    with pytest.raises(ValueError) as raised:
        resolve(str(model), None, "embedding")
    assert str(raised.value) == (
        "--preset qwen3-vl-reranker (chosen by the folder's name 'Qwen3-VL-Reranker-mine') is for reranker models, "
        f"not embedding models ({model}); give --preset none or one of qwen3-vl-embedding, chinese-clip, preflmr."
    )


def test_preset_name_and_overrides():
    settings = ModelSettings(preset="qwen3-vl-embedding", max_pixels=65536).resolve("/models/hub", "embedding")
    assert (settings.min_pixels, settings.max_pixels, settings.max_length) == (4096, 65536, 8192)
    assert resolve("Qwen/Qwen3-VL-Embedding-2B", "none", "embedding").query_instruction is None
    with pytest.raises(ValueError, match="--preset qwen3-vl-reranker is for reranker models"):
        resolve("/models/hub", "qwen3-vl-reranker", "embedding")


def test_every_setting_names_its_source():
    settings = resolve("Qwen/Qwen3-VL-Embedding-2B", None, "embedding").settings()
    assert settings["sources"]["max_pixels"] == "QE:28" and settings["max_pixels"] == 1_843_200


@pytest.mark.parametrize(
    ("given", "received"),
    [("Find the product", "Find the product."), ("找商品。", "找商品。"), (" Retrieve? ", "Retrieve?"), (None, None)],
)
def test_the_authors_punctuation_rule(given, received):
    assert punctuated(given) == received


def test_a_reranker_without_modules_json_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="no modules.json, so its scoring head would be newly initialised"):
        check_modules(str(tmp_path))


def test_an_unreachable_hub_fails_at_once_with_the_hint(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr("mmrhub.retrieve.model_loading.hub_reachable", lambda: False)
    with pytest.raises(ConnectionError, match="HF_HUB_OFFLINE=1"):
        check_reachable("org/not-cached-model", "--model")


def test_chinese_clip_preset_pads_52_tokens_and_resizes_square(tmp_path):
    pytest.importorskip("torch", reason="the encoder runs on torch (the retrieve extra)")
    pytest.importorskip("transformers", reason="a tiny Chinese-CLIP is built and loaded with transformers")
    from PIL import Image
    from tiny_models import build_tiny_chinese_clip

    from mmrhub.retrieve.data_loading import Row
    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder

    model = str(build_tiny_chinese_clip(tmp_path / "clip", ["除垢剂"]))
    encoder = build_encoder("transformers", model, resolve(model, "chinese-clip", "embedding"))
    batch = encoder.collate(QUERIES)([Row("q", "除垢剂", Image.new("RGB", (80, 40)))])
    assert batch["text"]["input_ids"].shape == (1, 52)
    assert batch["pixel_values"].shape[-2:] == (32, 32)  # the tiny tower's square input, the whole image kept
    assert encoder.identity["padding"] == "max_length"


def test_a_run_says_how_it_was_made(tmp_path, capsys):
    for module in ("torch", "transformers", "threadpoolctl"):  # what the retrieve pipeline imports
        pytest.importorskip(
            module, reason=f"mmrhub retrieve with a tiny Chinese-CLIP needs {module} (the retrieve extra)"
        )
    from _retrieve_helpers import retrieve
    from tiny_models import build_tiny_chinese_clip

    model = build_tiny_chinese_clip(tmp_path / "clip", ["除垢剂"])
    path, _, _ = retrieve(tmp_path, "mipr", "--backend", "transformers", "--model", model, "--preset", "chinese-clip")
    assert "[load model] preset chinese-clip, chosen by --preset chinese-clip\n" in capsys.readouterr().out
    meta = json.loads((tmp_path / "run.json.meta.json").read_text())
    assert meta["preset"] == "chinese-clip" and meta["settings"]["max_length"] == 52
    assert meta["model"]["model"]["files"] and meta["versions"]["transformers"]


def test_preflmr_runs_on_its_own_backend_with_each_querys_instruction_and_cites_the_authors():
    from mmrhub.retrieve.presets import PRESETS

    settings = ModelSettings().resolve("LinWeizheDragon/PreFLMR_ViT-G", "embedding")
    assert (settings.backend, settings.row_instructions, settings.image_processor) == ("preflmr", True, None)
    sources = settings.settings()["sources"]
    assert sources["passage_dtype"] == "FM:1338-1339 (passage vectors cast to half on a GPU; float32 on CPU)"
    assert sources["row_instructions"].startswith("FE:261-264")
    assert {name for name, preset in PRESETS.items() if preset.backend} == {"preflmr"}
    with pytest.raises(ValueError, match="/models/x runs with the none preset"):  # a folder names no family
        ModelSettings(image_processor="openai/clip-vit-large-patch14").resolve("/models/x", "embedding")
    with_preset = ModelSettings(preset="preflmr", image_processor="openai/clip-vit-large-patch14")
    assert with_preset.resolve("/models/x", "embedding").image_processor == "openai/clip-vit-large-patch14"


def test_image_processor_is_refused_outside_preflmr_in_one_line():
    with pytest.raises(ValueError, match=r"^--image-processor is for PreFLMR models \(--preset preflmr\); "):
        ModelSettings(image_processor="p").resolve("Qwen/Qwen3-VL-Embedding-2B", "embedding")


@pytest.mark.parametrize(
    ("model", "role"), [("Qwen/Qwen3-VL-Embedding-2B", "embedding"), ("Qwen/Qwen3-VL-Reranker-2B", "reranker")]
)
def test_default_instruction_gives_every_query_the_presets(model, role):
    assert ModelSettings().resolve(model, role).row_instructions
    settings = ModelSettings(default_instruction=True).resolve(model, role)
    assert not settings.row_instructions and settings.query_instruction  # the preset's own instruction stays


@pytest.mark.parametrize(
    ("file", "key", "said"),
    [
        ("tokenizer.json", ("added_tokens",), "KeyError: a field missing: 'added_tokens'"),
        ("tokenizer.json", ("model", "unk_token"), "Exception: missing field `unk_token` at line 1 column "),
        ("config.json", ("vision_config", "patch_size"), "RuntimeError: You set `ignore_mismatched_sizes` to "),
        ("config.json", ("text_config", "num_attention_heads"), "StrictDataclassClassValidationError: ValueError: "),
    ],
)
def test_a_damaged_model_file_is_one_line_naming_the_model(tmp_path, capsys, file, key, said):
    for module in ("torch", "transformers", "threadpoolctl"):
        pytest.importorskip(module)
    from tiny_models import build_tiny_chinese_clip

    from mmrhub.cli import main

    model = build_tiny_chinese_clip(tmp_path / "clip", ["除垢剂"])
    data = json.loads((model / file).read_text())
    *parents, last = key
    holder = data
    for name in parents:
        holder = holder[name]
    del holder[last]
    (model / file).write_text(json.dumps(data))
    argv = ["retrieve", "mipr", "--model", str(model), "--preset", "chinese-clip", "--no-cache", "--num-workers", "0"]
    assert main([*argv, "--output", str(tmp_path / "run.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"mmrhub retrieve: error: --model {model}: its files cannot be loaded ({said}"), err
    assert err.endswith(
        "); one of them (config.json, tokenizer.json, the weights) is damaged or of another model: download the "
        "model again."
    )
    assert not (tmp_path / "run.json").exists()
