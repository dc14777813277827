"""A PreFLMR checkpoint as the Hub has it, loaded into ``PreFLMRModel`` by name, with no custom code.

The files: ``config.json`` (model type ``flmr``), ``model.safetensors`` or shards listed in
``model.safetensors.index.json``, ``query_tokenizer/`` and ``context_tokenizer/`` (BERT wordpiece). Tensors are
named as the authors' FLMRModelForRetrieval names them under transformers 4.x (LinWeizheDragon/FLMR
``flmr/models/flmr/modeling_flmr.py``, "MF"): FLMRTextModel holds its BertModel as both ``bert_model`` and
``text_model`` (MF:1405, 1415); FLMRVisionModel wraps a CLIPVisionModel, itself wrapping the vision transformer
(``vision_model.vision_model``, MF:1483); a part the query and passage sides share is held under both sides' names
(MF:631-646). Such a tensor is accepted stored once under any of its names. Every tensor of our model must be found
and every stored tensor used (or known unused: the authors' ignored ``cls`` head, MF:550; the passages' own vision
tower and projection, which text-only passages never run; buffers our model rebuilds): otherwise one line names
them, and nothing is left at random.
"""

import os
from pathlib import Path

import torch

from mmrhub.retrieve.late_interaction.preflmr.config import CONTEXT_TOKENIZER
from mmrhub.retrieve.late_interaction.preflmr.config import QUERY_TOKENIZER
from mmrhub.retrieve.late_interaction.preflmr.config import PreFLMRConfig
from mmrhub.retrieve.late_interaction.preflmr.config import read_json
from mmrhub.retrieve.late_interaction.preflmr.inputs import PASSAGE_MARKER
from mmrhub.retrieve.late_interaction.preflmr.inputs import QUERY_MARKER

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
# what a Hub snapshot needs: config, weights (one file or shards named model-0000N-of-0000M) and index, tokenizers
HUB_FILES = ["config.json", "model*.safetensors", INDEX, f"{QUERY_TOKENIZER}/*", f"{CONTEXT_TOKENIZER}/*"]
NAMED_AT_MOST = 5  # names listed in an error line before "and N more"


def stored_prefixes(config: PreFLMRConfig) -> dict:
    """Our module prefix -> the prefixes the authors' checkpoint may store its tensors under, preferred first."""

    def text(side):
        return [f"{side}_text_encoder.bert_model.", f"{side}_text_encoder.text_model."]

    shared_text = [] if config.separate_text_encoders else text("query")
    vision_sides = ["query"] if config.separate_vision_encoders else ["context", "query"]
    prefixes = {
        "context_text.": text("context") + shared_text,
        "context_text_linear.": ["context_text_encoder_linear."]
        + ([] if config.separate_text_encoders else ["query_text_encoder_linear."]),
        "vision.": [f"{side}_vision_encoder.vision_model.vision_model." for side in vision_sides],
        "vision_projection.": [f"{side}_vision_projection.model." for side in vision_sides],
    }
    if config.separate_text_encoders:
        prefixes["query_text."] = text("query")
        prefixes["query_text_linear."] = ["query_text_encoder_linear."]
    if config.mapping is not None:
        prefixes["mapping_input_linear."] = ["transformer_mapping_input_linear."]
        prefixes["mapping_network."] = ["transformer_mapping_network."]
        prefixes["mapping_output_linear."] = ["transformer_mapping_output_linear."]
    return prefixes


def known_unused(config: PreFLMRConfig) -> tuple:
    """Prefixes of stored tensors this model has no use for (see the module's docstring)."""
    unused = ["cls."]
    if config.separate_vision_encoders:
        unused += ["context_vision_encoder.", "context_vision_projection."]
    return tuple(unused)


def candidates(name: str, prefixes: dict) -> list:
    """The stored names our tensor ``name`` may have."""
    for ours, theirs in prefixes.items():
        if name.startswith(ours):
            return [prefix + name[len(ours) :] for prefix in theirs]
    raise KeyError(f"no stored name declared for {name}")


def weight_files(folder: Path) -> dict:
    """Stored tensor name -> its safetensors file: from the shard index, else the single file."""
    index = folder / INDEX
    if index.is_file():
        weight_map = read_json(index, INDEX).get("weight_map")
        if (
            not isinstance(weight_map, dict)
            or not weight_map
            or not all(isinstance(v, str) for v in weight_map.values())
        ):
            raise ValueError(f"{index}: no weight_map; expected the shard index transformers writes.")
        files = {name: folder / shard for name, shard in weight_map.items()}
        outside = sorted(shard for shard in set(weight_map.values()) if Path(shard).name != shard)
        if outside:
            raise ValueError(f"{index}: {outside[0]} is not a file name in the checkpoint's folder; expected shards.")
        absent = sorted({str(path) for path in files.values() if not path.is_file()})
        if absent:
            raise FileNotFoundError(f"{index} lists {', '.join(absent)}, which is not there; download it again.")
        return files
    single = folder / SINGLE
    if not single.is_file():
        raise FileNotFoundError(
            f"{folder}: neither {INDEX} nor {SINGLE}; a PreFLMR checkpoint holds its weights in one of them."
        )
    from safetensors import safe_open

    with safe_open(single, "pt") as f:
        return {name: single for name in f.keys()}


def load_weights(model, folder) -> None:
    """Every tensor of ``model`` (a ``PreFLMRModel``) from the checkpoint in ``folder``, by name."""
    from safetensors import safe_open

    folder = Path(folder)
    files = weight_files(folder)
    prefixes = stored_prefixes(model.config)
    state = model.state_dict()
    chosen, missing = {}, []
    for name in state:
        found = [stored for stored in candidates(name, prefixes) if stored in files]
        if found:
            chosen[name] = found[0]
        else:
            missing.append(f"{name} (stored as {' or '.join(candidates(name, prefixes))})")
    aliases = {stored for name in state for stored in candidates(name, prefixes)}
    rebuilt = {stored for name, _ in model.named_buffers() for stored in _buffer_names(name, prefixes)}
    unexpected = sorted(
        name
        for name in files
        if name not in aliases and name not in rebuilt and not name.startswith(known_unused(model.config))
    )
    if missing:
        raise ValueError(
            f"{folder}: {len(missing)} tensor(s) of the model are not in the checkpoint: "
            f"{_listed(missing)}; the checkpoint does not match its config.json."
        )
    if unexpected:
        raise ValueError(
            f"{folder}: {len(unexpected)} tensor(s) in the checkpoint have no place in the model its "
            f"config.json describes: {_listed(unexpected)}."
        )
    by_file = {}
    for name, stored in chosen.items():
        by_file.setdefault(files[stored], []).append((name, stored))
    with torch.no_grad():
        for path, names in by_file.items():
            with safe_open(path, "pt") as f:
                for name, stored in names:
                    tensor = f.get_tensor(stored)
                    target = state[name]
                    if tensor.shape != target.shape:
                        raise ValueError(
                            f"{path}: {stored} has shape {tuple(tensor.shape)}; the model's config.json "
                            f"gives {tuple(target.shape)}."
                        )
                    check_weight(path, stored, tensor)
                    target.copy_(tensor)


def check_weight(path: Path, name: str, tensor) -> None:
    """A stored weight is floating point (an integer tensor would be cast without a word) and finite (a NaN or
    infinite weight makes every output NaN): else one line naming the file and the tensor."""
    if not tensor.is_floating_point():
        raise ValueError(
            f"{path}: {name} is stored as {str(tensor.dtype).removeprefix('torch.')}; a weight is floating point "
            "(float32, float16, bfloat16). The file is damaged or not this model's: download it again."
        )
    if not torch.isfinite(tensor).all():
        bad = int((~torch.isfinite(tensor)).sum())
        raise ValueError(
            f"{path}: {name} holds {bad:,} NaN or infinite value(s) of {tensor.numel():,}; every output would be "
            "NaN. The file is damaged: download it again."
        )


def _buffer_names(name: str, prefixes: dict) -> list:
    """Stored names of one of our buffers (position ids, which older checkpoints store and our model rebuilds)."""
    try:
        return candidates(name, prefixes)
    except KeyError:
        return []


def _listed(names: list) -> str:
    shown = ", ".join(names[:NAMED_AT_MOST])
    return shown + (f" and {len(names) - NAMED_AT_MOST} more" if len(names) > NAMED_AT_MOST else "")


def checkpoint_folder(model_id: str, revision=None) -> Path:
    """The local folder of ``model_id``: itself when it is a folder, else the Hub repository's files downloaded (or
    found in the cache) by huggingface_hub."""
    if os.path.isdir(model_id):
        return Path(model_id).resolve()
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(model_id, revision=revision, allow_patterns=HUB_FILES))


def load_tokenizers(folder: Path, vocab_size: int) -> tuple:
    """(query tokenizer, context tokenizer): BERT wordpiece from ``query_tokenizer/`` and ``context_tokenizer/``
    (the authors' tokenizers are BertTokenizer subclasses, tokenization_flmr.py:86, 162), each checked to hold the
    tokens the inputs are made of and no id past the text encoder's ``vocab_size``."""
    from transformers import BertTokenizer

    found = []
    for sub, marker in ((QUERY_TOKENIZER, QUERY_MARKER), (CONTEXT_TOKENIZER, PASSAGE_MARKER)):
        files = [folder / sub / name for name in ("vocab.txt", "tokenizer.json") if (folder / sub / name).is_file()]
        if not files:
            raise FileNotFoundError(
                f"{folder / sub}: neither vocab.txt nor tokenizer.json; a PreFLMR checkpoint holds its BERT tokenizers "
                f"in {QUERY_TOKENIZER}/ and {CONTEXT_TOKENIZER}/."
            )
        tokenizer = BertTokenizer.from_pretrained(str(folder / sub))
        vocab = tokenizer.get_vocab()
        needed = [tokenizer.pad_token, tokenizer.unk_token, tokenizer.cls_token, tokenizer.sep_token, marker]
        absent = [token for token in needed if token not in vocab]
        if absent:
            raise ValueError(
                f"{files[0]}: its vocabulary has no {', '.join(map(str, absent))}; PreFLMR's inputs are made of these "
                "tokens (a BERT wordpiece vocabulary). The file is damaged or not this model's."
            )
        if max(vocab.values()) >= vocab_size:
            raise ValueError(
                f"{files[0]}: token ids reach {max(vocab.values()):,}, but the text encoder has {vocab_size:,} "
                "(config.json's text_config.vocab_size); the tokenizer is not this model's."
            )
        found.append(tokenizer)
    return tuple(found)


def check_image_processor(processor, name: str, config: PreFLMRConfig) -> None:
    """The image processor makes finite images of the vision tower's size: else one line naming its file and what it
    makes (a crop_size of 0, another model's processor, an image_std of 0)."""
    from PIL import Image

    where = Path(name) / "preprocessor_config.json" if os.path.isdir(name) else f"{name} (preprocessor_config.json)"
    side = config.vision["image_size"]
    try:
        pixels = processor(images=[Image.new("RGB", (2 * side + 3, side + 5), (120, 60, 200))], return_tensors="pt")
        pixels = pixels["pixel_values"]
    except (ValueError, TypeError, ZeroDivisionError, RuntimeError) as err:
        raise ValueError(f"{where}: the image processor cannot make an image ({err}); check its sizes.") from None
    if tuple(pixels.shape[-2:]) != (side, side):
        raise ValueError(
            f"{where}: the image processor makes {pixels.shape[-1]}x{pixels.shape[-2]} images; the vision tower takes "
            f"{side}x{side} (config.json's vision_config.image_size). Give the processor of this model "
            "(--image-processor, or its crop_size and size)."
        )
    if not torch.isfinite(pixels).all():
        raise ValueError(
            f"{where}: the image processor makes NaN or infinite pixel values (its image_std is "
            f"[{', '.join(f'{value:g}' for value in processor.image_std)}]); expected a standard deviation above 0 "
            "for each channel."
        )
