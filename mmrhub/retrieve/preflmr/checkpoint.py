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

import json
import os
from pathlib import Path

import torch

from mmrhub.retrieve.preflmr.config import CONTEXT_TOKENIZER
from mmrhub.retrieve.preflmr.config import QUERY_TOKENIZER
from mmrhub.retrieve.preflmr.config import PreFLMRConfig

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
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(f"{index}: no weight_map; expected the shard index transformers writes.")
        files = {name: folder / shard for name, shard in weight_map.items()}
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
                    target.copy_(tensor)


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


def hub_file(model_id: str, filename: str, what: str) -> str:
    """One file of a Hub repository (downloaded or from the cache); one line naming ``what`` when unavailable."""
    from huggingface_hub import hf_hub_download

    try:
        return hf_hub_download(model_id, filename)
    except Exception as error:  # offline, unknown repository, no such file: all one line
        raise FileNotFoundError(
            f"{what} {model_id!r}: its {filename} could not be read ({type(error).__name__}); "
            "give a folder holding it, or download it where the Hub can be reached."
        ) from None


def load_tokenizers(folder: Path) -> tuple:
    """(query tokenizer, context tokenizer): BERT wordpiece from ``query_tokenizer/`` and ``context_tokenizer/``
    (the authors' tokenizers are BertTokenizer subclasses, tokenization_flmr.py:86, 162)."""
    from transformers import BertTokenizer

    found = []
    for sub in (QUERY_TOKENIZER, CONTEXT_TOKENIZER):
        if not any((folder / sub / name).is_file() for name in ("vocab.txt", "tokenizer.json")):
            raise FileNotFoundError(
                f"{folder / sub}: neither vocab.txt nor tokenizer.json; a PreFLMR checkpoint holds its BERT tokenizers "
                f"in {QUERY_TOKENIZER}/ and {CONTEXT_TOKENIZER}/."
            )
        found.append(BertTokenizer.from_pretrained(str(folder / sub)))
    return tuple(found)
