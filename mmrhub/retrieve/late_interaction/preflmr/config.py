"""A PreFLMR checkpoint's settings, read from its files: ``config.json`` (model type ``flmr``) and the two tokenizers'
``tokenizer_config.json``. Every value comes from the files; where a key is absent, the value the authors' own
classes give it (LinWeizheDragon/FLMR ``flmr/models/flmr/configuration_flmr.py`` FLMRConfig 328-350, FLMRTextConfig
216-235; ``tokenization_flmr.py`` 103, 180), so that a file means here what it means to their code. A value this
package does not implement is refused in one line naming the key.

Where the authors keep each value:
  - ``query_maxlen``: the query tokenizer's ``tokenizer_config.json`` (FLMRBertQueryEncoderTokenizer keeps its
    ``__init__`` keywords there, tokenization_flmr.py:177-191; the example loads it from ``query_tokenizer/``,
    examples/example_use_preflmr.py:238-240). ``text_config.query_maxlen`` is read by their code only for non-BERT
    text encoders (tokenization_flmr.py:429-432), which are refused here.
  - ``doc_maxlen``: the context tokenizer's ``tokenizer_config.json`` (tokenization_flmr.py:101-111); their
    indexing passes 512 (examples/example_use_preflmr.py:68), the tokenizer's cap.
  - ``vision_model_version``: config.json, the image processor the authors' indexer builds (configuration_flmr.py:
    305-307); the image processor's own folder is a separate repository.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path

from mmrhub.retrieve.model_loading import hub_file

MODEL_TYPE = "flmr"
BERT_BASE = "bert-base-uncased"  # the one text encoder base the authors build from BertModel (modeling_flmr.py:1404)
# Keys of FLMRTextConfig that build its BertModel (configuration_flmr.py:216-235).
TEXT_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "max_position_embeddings",
    "type_vocab_size",
    "initializer_range",
    "layer_norm_eps",
    "pad_token_id",
)
TEXT_DEFAULTS = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=512,
    type_vocab_size=2,
    initializer_range=0.02,
    layer_norm_eps=1e-12,
    pad_token_id=0,
)
# FLMRVisionConfig (configuration_flmr.py:90-106): CLIPVisionConfig's keys and defaults.
VISION_DEFAULTS = dict(
    hidden_size=768,
    intermediate_size=3072,
    projection_dim=512,
    num_hidden_layers=12,
    num_attention_heads=12,
    num_channels=3,
    image_size=224,
    patch_size=32,
    hidden_act="quick_gelu",
    layer_norm_eps=1e-5,
    attention_dropout=0.0,
    initializer_range=0.02,
    initializer_factor=1.0,
)
# FLMRConfig's defaults (configuration_flmr.py:328-350).
FLMR_DEFAULTS = dict(
    mask_punctuation=True,
    mapping_network_prefix_length=32,
    dim=128,
    use_vision_encoder=True,
    separate_query_and_context_text_encoder=False,
    separate_query_and_context_vision_encoder=False,
    query_concat_output_from_vision_encoder=True,
    query_concat_output_from_text_encoder=True,
    context_concat_output_from_vision_encoder=False,
    context_concat_output_from_text_encoder=True,
    use_transformer_mapping_network=False,
    transformer_mapping_config_base=None,
    transformer_mapping_num_hidden_layers=None,
    mask_instruction_token=None,
    transformer_mapping_cross_attention_length=32,
    vision_model_version="openai/clip-vit-base-patch32",
    query_mask_input_ids_skip_list=[],
)
# What each value must be, checked where the file is read (a wrong type or an absurd size is one line naming the
# file and key, never torch's words later): (kind, lowest, highest).
SIZE, LAYERS, HEADS = (1, 65_536), (1, 256), (1, 1_024)
FLMR_TYPES = {
    "mask_punctuation": ("bool",),
    "use_vision_encoder": ("bool",),
    "separate_query_and_context_text_encoder": ("bool",),
    "separate_query_and_context_vision_encoder": ("bool",),
    "query_concat_output_from_vision_encoder": ("bool",),
    "query_concat_output_from_text_encoder": ("bool",),
    "context_concat_output_from_vision_encoder": ("bool",),
    "context_concat_output_from_text_encoder": ("bool",),
    "use_transformer_mapping_network": ("bool",),
    "dim": ("int", *SIZE),
    "mapping_network_prefix_length": ("int", 1, 4_096),
    "transformer_mapping_cross_attention_length": ("int", *SIZE),
    "vision_model_version": ("text",),
}
BERT_TYPES = {
    "vocab_size": ("int", 1, 1_000_000),
    "hidden_size": ("int", *SIZE),
    "num_hidden_layers": ("int", *LAYERS),
    "num_attention_heads": ("int", *HEADS),
    "intermediate_size": ("int", 1, 262_144),
    "hidden_act": ("text",),
    "hidden_dropout_prob": ("fraction",),
    "attention_probs_dropout_prob": ("fraction",),
    "max_position_embeddings": ("int", *SIZE),
    "type_vocab_size": ("int", *HEADS),
    "initializer_range": ("number",),
    "layer_norm_eps": ("number",),
    "pad_token_id": ("int", 0, 1_000_000),
}
VISION_TYPES = {
    "hidden_size": ("int", *SIZE),
    "intermediate_size": ("int", 1, 262_144),
    "projection_dim": ("int", *SIZE),
    "num_hidden_layers": ("int", *LAYERS),
    "num_attention_heads": ("int", *HEADS),
    "num_channels": ("int", 3, 3),
    "image_size": ("int", 1, 8_192),
    "patch_size": ("int", 1, 8_192),
    "hidden_act": ("text",),
    "layer_norm_eps": ("number",),
    "attention_dropout": ("fraction",),
    "initializer_range": ("number",),
    "initializer_factor": ("number",),
}
QUERY_MAXLEN_DEFAULT = 32  # FLMRBertQueryEncoderTokenizer (tokenization_flmr.py:180)
DOC_MAXLEN_DEFAULT = 512  # FLMRBertContextEncoderTokenizer (tokenization_flmr.py:103)
QUERY_TOKENIZER = "query_tokenizer"
CONTEXT_TOKENIZER = "context_tokenizer"


@dataclass(frozen=True)
class PreFLMRConfig:
    """What the model and its inputs need, each value from the checkpoint's files."""

    text: dict  # BertConfig keywords of the query and context text encoders
    vision: dict  # CLIPVisionConfig keywords of the vision tower
    mapping: dict | None  # BertConfig keywords of the transformer mapping network (None: FLMR, no mapping network)
    dim: int
    prefix_length: int  # mapping_network_prefix_length: tokens the MLP makes of the vision CLS
    cross_attention_length: int  # text states the mapping network cross-attends to
    separate_text_encoders: bool
    separate_vision_encoders: bool
    query_text: bool  # query_concat_output_from_text_encoder
    query_vision: bool  # query_concat_output_from_vision_encoder
    mask_punctuation: bool
    mask_instruction_token: str | None
    query_skip_ids: tuple  # query_mask_input_ids_skip_list
    query_maxlen: int
    doc_maxlen: int
    vision_model_version: str

    def describe(self) -> dict:
        """The settings, for the encoder's identity (cache key, run records)."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("text", "vision", "mapping") or value is not None
        }


def read_json(path: Path, what: str) -> dict:
    """A JSON file's object; one line naming the file when it is missing or unreadable."""
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no {what}; a PreFLMR checkpoint folder holds config.json, query_tokenizer/ "
            "and context_tokenizer/."
        )
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ValueError(f"{path}: not valid JSON ({error}).") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(value).__name__}.")
    return value


def read_config(folder) -> PreFLMRConfig:
    """The settings of the PreFLMR checkpoint in ``folder``."""
    folder = Path(folder)
    path = folder / "config.json"
    raw = read_json(path, "config.json")
    if raw.get("model_type") != MODEL_TYPE:
        raise ValueError(
            f"{path}: model_type is {raw.get('model_type')!r}; --preset preflmr needs a PreFLMR "
            f"checkpoint (model_type {MODEL_TYPE!r})."
        )
    flmr = {key: raw.get(key, default) for key, default in FLMR_DEFAULTS.items()}
    for key, kind in FLMR_TYPES.items():
        checked(path, key, flmr[key], *kind)
    text_raw = section(path, raw, "text_config")
    _refuse(path, "use_vision_encoder", flmr["use_vision_encoder"] is not True, "true (images are encoded here)")
    _refuse(
        path,
        "context_concat_output_from_vision_encoder",
        flmr["context_concat_output_from_vision_encoder"],
        "false (M2KR's passages are text)",
    )
    _refuse(
        path, "context_concat_output_from_text_encoder", not flmr["context_concat_output_from_text_encoder"], "true"
    )
    _refuse(
        path,
        "query_concat_output_from_*",
        not (flmr["query_concat_output_from_text_encoder"] or flmr["query_concat_output_from_vision_encoder"]),
        "at least one of them true",
    )
    base = text_raw.get("text_encoder_base_model", BERT_BASE)
    _refuse(path, "text_config.text_encoder_base_model", base != BERT_BASE, f"{BERT_BASE!r} (a BertModel)")
    _refuse(path, "text_config.projection_dim", text_raw.get("projection_dim", 0) not in (0, None), "0")
    position = text_raw.get("position_embedding_type", "absolute")
    _refuse(path, "text_config.position_embedding_type", position != "absolute", "'absolute'")
    text = bert_settings(path, "text_config.", {key: text_raw.get(key, TEXT_DEFAULTS[key]) for key in TEXT_KEYS})
    vision_raw = section(path, raw, "vision_config")
    vision = {key: vision_raw.get(key, default) for key, default in VISION_DEFAULTS.items()}
    for key, kind in VISION_TYPES.items():
        checked(path, f"vision_config.{key}", vision[key], *kind)
    heads(path, "vision_config.", vision)
    if vision["patch_size"] > vision["image_size"]:
        raise ValueError(
            f"{path}: vision_config.patch_size {vision['patch_size']} is larger than vision_config.image_size "
            f"{vision['image_size']}; expected a patch that fits the image."
        )
    mapping = None
    if flmr["use_transformer_mapping_network"]:
        mapping = mapping_config(flmr["transformer_mapping_config_base"], folder, path)
        layers = flmr["transformer_mapping_num_hidden_layers"]
        checked(path, "transformer_mapping_num_hidden_layers", layers, "int", *LAYERS)
        if mapping["hidden_size"] != text["hidden_size"]:  # the authors assert it (modeling_flmr.py:609-611)
            raise ValueError(
                f"{path}: the mapping network's hidden_size {mapping['hidden_size']} differs from the "
                f"text encoder's {text['hidden_size']}; its cross-attention needs them equal."
            )
        mapping["num_hidden_layers"] = layers
    instruction = flmr["mask_instruction_token"]
    _refuse(
        path, "mask_instruction_token", instruction is not None and not isinstance(instruction, str), "a string or null"
    )
    skip = flmr["query_mask_input_ids_skip_list"] or []
    if not isinstance(skip, list) or not all(_whole(i) and 0 <= i < text["vocab_size"] for i in skip):
        raise ValueError(
            f"{path}: query_mask_input_ids_skip_list is {_shown(skip)}; expected a list of token ids (0 to "
            f"{text['vocab_size'] - 1:,}, text_config.vocab_size)."
        )
    positions = (text["max_position_embeddings"], "config.json's text_config.max_position_embeddings")
    return PreFLMRConfig(
        text=text,
        vision=vision,
        mapping=mapping,
        dim=flmr["dim"],
        prefix_length=flmr["mapping_network_prefix_length"],
        cross_attention_length=flmr["transformer_mapping_cross_attention_length"],
        separate_text_encoders=flmr["separate_query_and_context_text_encoder"],
        separate_vision_encoders=flmr["separate_query_and_context_vision_encoder"],
        query_text=flmr["query_concat_output_from_text_encoder"],
        query_vision=flmr["query_concat_output_from_vision_encoder"],
        mask_punctuation=flmr["mask_punctuation"],
        mask_instruction_token=instruction,
        query_skip_ids=tuple(skip),
        query_maxlen=_tokenizer_value(folder / QUERY_TOKENIZER, "query_maxlen", QUERY_MAXLEN_DEFAULT, positions),
        doc_maxlen=min(
            _tokenizer_value(folder / CONTEXT_TOKENIZER, "doc_maxlen", DOC_MAXLEN_DEFAULT, positions),
            DOC_MAXLEN_DEFAULT,
        ),
        vision_model_version=flmr["vision_model_version"],
    )


def mapping_config(base, folder: Path, path: Path) -> dict:
    """The BertConfig keywords of the mapping network's base (``transformer_mapping_config_base``, which the authors
    load with BertConfig.from_pretrained, modeling_flmr.py:600-607): ``bert-base-uncased`` is BertConfig's defaults
    (its published geometry), offline; a folder (absolute, or relative to the checkpoint) or another Hub name is
    read from its config.json."""
    from transformers import BertConfig

    if base is None:
        raise ValueError(
            f"{path}: use_transformer_mapping_network is true but transformer_mapping_config_base is "
            f"missing; give the mapping network's BertConfig base (e.g. {BERT_BASE!r})."
        )
    checked(path, "transformer_mapping_config_base", base, "text")
    if base == BERT_BASE:
        settings = BertConfig().to_dict()
    else:
        candidates = [folder / base, Path(base)]
        found = next((c / "config.json" for c in candidates if (c / "config.json").is_file()), None)
        if found is None:
            found = Path(hub_file(base, "config.json", "transformer_mapping_config_base"))
        settings = read_json(found, "config.json")
        path = found
    keys = set(TEXT_KEYS) | {"hidden_size"}
    bert = BertConfig().to_dict()
    return bert_settings(path, "", {key: settings.get(key, bert[key]) for key in keys})


def _tokenizer_value(folder: Path, key: str, default: int, positions: tuple) -> int:
    """``key`` from a tokenizer folder's tokenizer_config.json, else the authors' class default: a number of tokens
    from 2 to the text encoder's positions (``positions``: how many, and where that is said)."""
    path = folder / "tokenizer_config.json"
    value = read_json(path, "tokenizer_config.json").get(key, default)
    most, where = positions
    cut = min(value, DOC_MAXLEN_DEFAULT) if _whole(value) and key == "doc_maxlen" else value  # passages: 512 at most
    if not _whole(value) or value < 2 or cut > most:
        raise ValueError(
            f"{path}: {key} is {_shown(value)}; expected a number of tokens from 2 to {most:,} (the text encoder's "
            f"positions, {where})."
        )
    return value


def section(path: Path, raw: dict, key: str) -> dict:
    """A nested settings object of config.json (absent: the authors' defaults)."""
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{path}: {key} is {_shown(value)}; expected an object of settings.")
    return value


def bert_settings(path: Path, prefix: str, settings: dict) -> dict:
    """BertConfig keywords, each checked (``BERT_TYPES``), naming the file and ``prefix`` + key."""
    for key, kind in BERT_TYPES.items():
        if key in settings:
            checked(path, prefix + key, settings[key], *kind)
    heads(path, prefix, settings)
    if settings["pad_token_id"] >= settings["vocab_size"]:
        raise ValueError(
            f"{path}: {prefix}pad_token_id {settings['pad_token_id']} is not a token of the "
            f"{settings['vocab_size']}-token vocabulary ({prefix}vocab_size)."
        )
    return settings


def heads(path: Path, prefix: str, settings: dict) -> None:
    """The attention heads divide the hidden size (transformers' BERT and CLIP need it)."""
    if settings["hidden_size"] % settings["num_attention_heads"]:
        raise ValueError(
            f"{path}: {prefix}hidden_size {settings['hidden_size']} is not a multiple of {prefix}num_attention_heads "
            f"{settings['num_attention_heads']}; expected heads that divide it."
        )


def checked(path: Path, key: str, value, kind: str, low=None, high=None):
    """``value`` if it is of ``kind`` (bool, int from low to high, text, number, fraction); else one line naming
    the file and key. JSON's ``"no"`` is not false, and ``true`` is not a number."""
    if kind == "bool":
        ok, expected = isinstance(value, bool), "true or false"
    elif kind == "int":
        ok, expected = _whole(value) and low <= value <= high, f"a whole number from {low:,} to {high:,}"
    elif kind == "text":
        ok, expected = isinstance(value, str) and value.strip() != "", "a non-empty string"
    else:
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if kind == "fraction":
            ok, expected = number and 0 <= value < 1, "a number from 0 up to 1"
        else:
            ok, expected = number and value >= 0, "a number, 0 or more"
    if not ok:
        raise ValueError(f"{path}: {key} is {_shown(value)}; expected {expected}.")
    return value


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value) -> str:
    text = json.dumps(value) if isinstance(value, (str, bool, type(None))) else repr(value)
    if _whole(value):
        text = f"{value:,}"
    return text if len(text) <= 60 else text[:57] + "..."


def _refuse(path: Path, key: str, refused: bool, expected: str) -> None:
    if refused:
        raise ValueError(f"{path}: {key} is not supported here; expected {expected}.")
