"""Every PreFLMR file is checked where it is read, in one line naming the file and the key, before torch meets a
value it would fail on late in its own words: config values of the wrong type or an absurd size, token lengths past
the text encoder's positions, a vocabulary without the tokens the inputs are made of, an image processor that makes
images of another size or NaN pixels, a shard index that does not parse, weights stored as integers or holding NaN
or infinity. The whole command fails as the load does: one line, exit 1, nothing written."""

import json
import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _damaged_models import damaged_copy  # noqa: E402
from tiny_models import PREFLMR_PROCESSOR  # noqa: E402
from tiny_models import build_preflmr  # noqa: E402

from mmrhub.cli import main  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.config import read_config  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder  # noqa: E402

TEXTS = ["using the provided image obtain documents that address the subsequent question", "who designed this"]


@pytest.fixture(scope="module")
def checkpoint(built):
    return built(build_preflmr, "tiny", texts=TEXTS)


def edited(checkpoint, tmp_path, file: str, **changes):
    """A copy of the checkpoint whose JSON ``file`` has ``changes``; returns (folder, that file)."""
    folder = shutil.copytree(checkpoint, tmp_path / "PreFLMR-tiny")
    path = folder / file
    settings = json.loads(path.read_text())
    for key, value in changes.items():
        section, _, name = key.rpartition("__")
        (settings[section] if section else settings)[name] = value
    path.write_text(json.dumps(settings))
    return folder, path


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("mask_punctuation", "no", 'mask_punctuation is "no"; expected true or false.'),
        ("use_transformer_mapping_network", 1, "use_transformer_mapping_network is 1; expected true or false."),
        (
            "transformer_mapping_cross_attention_length",
            0,
            "transformer_mapping_cross_attention_length is 0; expected a whole number from 1 to 65,536.",
        ),
        ("dim", 16.5, "dim is 16.5; expected a whole number from 1 to 65,536."),
        ("dim", True, "dim is true; expected a whole number from 1 to 65,536."),
        ("mapping_network_prefix_length", -3, "mapping_network_prefix_length is -3; expected a whole number from 1"),
        ("transformer_mapping_num_hidden_layers", 0, "transformer_mapping_num_hidden_layers is 0; expected a whole"),
        ("vision_model_version", "", 'vision_model_version is ""; expected a non-empty string.'),
        ("transformer_mapping_config_base", 5, "transformer_mapping_config_base is 5; expected a non-empty string."),
        ("query_mask_input_ids_skip_list", ["a"], "query_mask_input_ids_skip_list is ['a']; expected a list of token"),
        ("query_mask_input_ids_skip_list", [10**6], "query_mask_input_ids_skip_list is [1000000]; expected a list of"),
        ("text_config__vocab_size", 10**12, "text_config.vocab_size is 1,000,000,000,000; expected a whole number"),
        ("text_config__hidden_size", 33, "text_config.hidden_size 33 is not a multiple of text_config.num_attention"),
        (
            "text_config__hidden_dropout_prob",
            2,
            "text_config.hidden_dropout_prob is 2; expected a number from 0 up to 1",
        ),
        ("text_config__layer_norm_eps", "tiny", 'text_config.layer_norm_eps is "tiny"; expected a number, 0 or more.'),
        ("vision_config__image_size", 0, "vision_config.image_size is 0; expected a whole number from 1 to 8,192."),
        ("vision_config__patch_size", 29, "vision_config.patch_size 29 is larger than vision_config.image_size 28"),
        ("vision_config__num_channels", 4, "vision_config.num_channels is 4; expected a whole number from 3 to 3."),
        ("text_config", [1], "text_config is [1]; expected an object of settings."),
    ],
)
def test_a_config_value_of_the_wrong_type_or_size_is_named(checkpoint, tmp_path, key, value, expected):
    folder, path = edited(checkpoint, tmp_path, "config.json", **{key: value})
    with pytest.raises(ValueError) as raised:
        read_config(folder)
    assert str(raised.value).startswith(f"{path}: {expected}")


def test_the_mapping_base_is_checked_naming_its_file(checkpoint, tmp_path):
    folder, path = edited(checkpoint, tmp_path, "mapping_base/config.json", num_attention_heads="two")
    with pytest.raises(ValueError) as raised:
        read_config(folder)
    assert str(raised.value) == f'{path}: num_attention_heads is "two"; expected a whole number from 1 to 1,024.'


@pytest.mark.parametrize(
    ("file", "key", "value"),
    [
        ("query_tokenizer/tokenizer_config.json", "query_maxlen", 10_000_000),
        ("query_tokenizer/tokenizer_config.json", "query_maxlen", 1),
        ("query_tokenizer/tokenizer_config.json", "query_maxlen", "32"),
        ("context_tokenizer/tokenizer_config.json", "doc_maxlen", 0),
    ],
)
def test_token_lengths_past_the_text_encoders_positions_are_named(checkpoint, tmp_path, file, key, value):
    folder, path = edited(checkpoint, tmp_path, file, **{key: value})
    shown = f"{value:,}" if isinstance(value, int) else json.dumps(value)
    with pytest.raises(ValueError) as raised:
        read_config(folder)
    assert str(raised.value) == (
        f"{path}: {key} is {shown}; expected a number of tokens from 2 to 512 (the text encoder's positions, "
        "config.json's text_config.max_position_embeddings)."
    )


def test_passages_longer_than_the_positions_are_named(checkpoint, tmp_path):
    folder, path = edited(checkpoint, tmp_path, "config.json", text_config__max_position_embeddings=40)
    with pytest.raises(ValueError) as raised:
        read_config(folder)
    tokenizer = folder / "context_tokenizer" / "tokenizer_config.json"  # no doc_maxlen: the authors' 512
    assert str(raised.value) == (
        f"{tokenizer}: doc_maxlen is 512; expected a number of tokens from 2 to 40 (the text encoder's positions, "
        "config.json's text_config.max_position_embeddings)."
    )


@pytest.mark.parametrize("kept", ["nothing", "all but [unused0]"])
def test_a_vocabulary_without_the_tokens_inputs_are_made_of_is_named(checkpoint, tmp_path, kept):
    folder = shutil.copytree(checkpoint, tmp_path / "PreFLMR-tiny")
    vocab = folder / "query_tokenizer" / "vocab.txt"
    words = [] if kept == "nothing" else [w for w in vocab.read_text().splitlines() if w != "[unused0]"]
    vocab.write_text("".join(f"{word}\n" for word in words))  # an empty file: the tokenizer adds its own specials
    with pytest.raises(ValueError) as raised:
        build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR))
    assert str(raised.value) == (
        f"{vocab}: its vocabulary has no [unused0]; PreFLMR's inputs are made of these tokens (a BERT wordpiece "
        "vocabulary). The file is damaged or not this model's."
    )


def test_a_vocabulary_larger_than_the_text_encoders_is_named(checkpoint, tmp_path):
    folder = shutil.copytree(checkpoint, tmp_path / "PreFLMR-tiny")
    vocab = folder / "context_tokenizer" / "vocab.txt"
    words = vocab.read_text().splitlines()
    vocab.write_text("".join(f"{word}\n" for word in words) + "".join(f"extra{i}\n" for i in range(10)))
    size = json.loads((folder / "config.json").read_text())["text_config"]["vocab_size"]
    assert size == len(words)
    with pytest.raises(ValueError) as raised:
        build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR))
    assert str(raised.value) == (
        f"{vocab}: token ids reach {size + 9}, but the text encoder has {size} (config.json's text_config.vocab_size); "
        "the tokenizer is not this model's."
    )


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        (
            {"crop_size": {"height": 0, "width": 0}},
            "the image processor makes 0x0 images; the vision tower takes 28x28",
        ),
        (
            {"crop_size": {"height": 32, "width": 32}, "size": {"shortest_edge": 32}},
            "the image processor makes 32x32 images; the vision tower takes 28x28 (config.json's "
            "vision_config.image_size). Give the processor of this model (--image-processor, or its crop_size and "
            "size).",
        ),
        (
            {"image_std": [0, 0, 0]},
            "the image processor makes NaN or infinite pixel values (its image_std is [0, 0, 0]); expected a "
            "standard deviation above 0 for each channel.",
        ),
    ],
)
def test_an_image_processor_that_does_not_fit_the_vision_tower_is_named(checkpoint, tmp_path, changes, said):
    folder, path = edited(checkpoint, tmp_path, f"{PREFLMR_PROCESSOR}/preprocessor_config.json", **changes)
    with pytest.raises(ValueError) as raised:
        build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR))
    assert str(raised.value).startswith(f"{path}: {said}")


def test_a_shard_index_that_does_not_parse_is_named(checkpoint, tmp_path):
    folder = shutil.copytree(checkpoint, tmp_path / "PreFLMR-tiny")
    index = folder / "model.safetensors.index.json"
    index.write_text(index.read_text()[:-40])
    with pytest.raises(ValueError) as raised:
        build_preflmr_encoder(str(folder), image_processor=str(folder / PREFLMR_PROCESSOR))
    assert str(raised.value).startswith(f"{index}: not valid JSON (")


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("a weight stored as int64", "is stored as int64; a weight is floating point (float32, float16, bfloat16)."),
        ("one NaN weight", "holds 1 NaN or infinite value(s) of 512; every output would be NaN."),
        ("a tensor of NaN", "holds 512 NaN or infinite value(s) of 512; every output would be NaN."),
        ("an infinite tensor", "holds 512 NaN or infinite value(s) of 512; every output would be NaN."),
    ],
)
def test_a_weight_stored_as_integers_or_holding_nan_is_named(checkpoint, tmp_path, damage, said, capsys):
    name = "query_text_encoder_linear.weight"
    folder = damaged_copy(checkpoint, tmp_path / "PreFLMR-tiny", damage, name)
    shard = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"][name]
    argv = ["retrieve", "m2kr", "--preset", "preflmr", "--model", str(folder), "--num-workers", "0"]
    argv += ["--image-processor", str(folder / PREFLMR_PROCESSOR), "--output", str(tmp_path / "runs" / "run.json")]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"mmrhub retrieve: error: {folder / shard}: {name} {said}")
    assert [p for p in tmp_path.rglob("*") if p.is_file() and "PreFLMR-tiny" not in p.parts] == []
