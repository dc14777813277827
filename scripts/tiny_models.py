"""Randomly initialised checkpoints of the real layouts, built offline and saved like downloaded ones (load them with
``--model PATH``): tiny ones for a first run on a laptop (``make_tiny_models.py`` beside this file) and for the
tests (``tests/conftest.py`` puts this folder on ``sys.path``), and the real 2B / 8B Qwen3-VL configurations for
``bench/gpu_check.sh``. Their weights are random: their runs test the pipeline and its speed, never a model. A
script's module, not the library's: the installed package never builds a model. Each folder it writes says its
weights are random (``mmrhub.records.random_weights.RANDOM_WEIGHTS``), as do the records and tables of the runs made
with it.

What each one is:
  - ``build_tiny_chinese_clip``: a 2-layer Chinese-CLIP (BERT text tower, ViT image tower), for ``--backend
    transformers``; needs no torchvision.
  - ``build_tiny_sentence_transformer``: that Chinese-CLIP inside a sentence-transformers model (Transformer,
    Normalize): images and texts embedded apart, fused by the rule of ``mmrhub/retrieve/encoders.py``.
  - ``build_qwen3_vl_embedding`` / ``build_qwen3_vl_reranker``: Qwen3-VL with the real layout (byte-level tokenizer,
    Qwen2-VL image processor with 16-pixel patches and 2x2 merge, interleaved M-RoPE, deepstack), last-token pooled
    and L2-normalised like Qwen3-VL-Embedding, or with its LM head scored yes - no like Qwen3-VL-Reranker; ``size``
    ``tiny`` (2 layers, 32-d), ``2b`` or ``8b`` (the published configurations). Qwen3-VL's processor needs
    torchvision.
  - ``build_tiny_llava_reranker``: a generative reranker like Qwen3-VL-Reranker, but tiny and torchvision-free (CLIP
    vision tower, Qwen2 text model).
  - ``build_preflmr``: PreFLMR (LinWeizheDragon/FLMR) with the Hub checkpoint's layout (config.json of model type
    ``flmr``, sharded safetensors under the authors' tensor names, query_tokenizer/ and context_tokenizer/, and a
    CLIP image processor folder beside them); ``size`` ``tiny`` or ``vit-g`` (PreFLMR_ViT-G's geometry).

Everything heavy is imported inside the builders.
"""

import json
import string
from pathlib import Path

from mmrhub.records.random_weights import mark_random_weights
from mmrhub.retrieve.presets import QWEN3_VL_RERANKER

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_vocab(texts, lower_case: bool = True) -> dict:
    """Every character of the texts (lower-cased with ``lower_case``), plus ``##`` pieces so that Latin words split
    into letters."""
    chars = {c for text in texts for c in (text.lower() if lower_case else text) if not c.isspace()}
    chars = sorted(chars | set(string.printable.strip()))
    pieces = ["##" + c for c in string.ascii_lowercase + string.digits]
    return {token: index for index, token in enumerate(SPECIAL_TOKENS + chars + pieces)}


def build_tiny_chinese_clip(
    folder, texts, seed: int = 0, lower_case: bool = True, image_size: int = 32, patch_size: int = 8
) -> Path:
    """A 2-layer Chinese-CLIP (BERT text tower, ViT image tower), 32-d projections, with its processor; its
    vocabulary holds the characters of ``texts``. ``lower_case=False``: a tokenizer that keeps case (and so maps
    upper-case words to [UNK]); ``image_size``: its tower's square input (224 for the real ones)."""
    import torch
    from transformers import BertTokenizerFast
    from transformers import ChineseCLIPConfig
    from transformers import ChineseCLIPModel
    from transformers import ChineseCLIPProcessor
    from transformers.models.chinese_clip.image_processing_pil_chinese_clip import ChineseCLIPImageProcessorPil

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = BertTokenizerFast(vocab=wordpiece_vocab(texts), do_lower_case=lower_case)
    config = ChineseCLIPConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=128,
        ),
        vision_config=dict(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            image_size=image_size,
            patch_size=patch_size,
        ),
        projection_dim=32,
    )
    torch.manual_seed(seed)
    ChineseCLIPModel(config).eval().save_pretrained(folder)
    image_processor = ChineseCLIPImageProcessorPil(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    )
    ChineseCLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return mark_random_weights(folder)


def build_tiny_sentence_transformer(folder, texts, seed: int = 1) -> Path:
    """A sentence-transformers model (Transformer module over a tiny Chinese-CLIP, then Normalize), saved to disk."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize
    from sentence_transformers.base.modules import Transformer

    folder = Path(folder)
    backbone = build_tiny_chinese_clip(folder / "backbone", texts, seed=seed)
    model = SentenceTransformer(modules=[Transformer(str(backbone)), Normalize()], device="cpu")
    model.save(str(folder / "model"))
    return mark_random_weights(folder / "model")


QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
# ChatML as Qwen3-VL's template writes it: "<|im_start|>role\n...<|im_end|>\n" a turn, content items joined as
# they come, an image as <|vision_start|><|image_pad|><|vision_end|>. (transformers renders with trim_blocks: no
# newline may follow a {% %} tag directly, hence {{ "\n" }}.)
_QWEN_CONTENT = (
    "{% if content is string %}{{ content }}{% else %}{% for item in content %}"
    "{% if item['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}{% endif %}"
)
QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}{{ '\n' }}{% set content = message['content'] %}"
    + _QWEN_CONTENT
    + "<|im_end|>{{ '\n' }}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant{{ '\n' }}{% endif %}"
)
RERANKER_SYSTEM = QWEN3_VL_RERANKER.system_prompt
RERANKER_DEFAULT_INSTRUCTION = QWEN3_VL_RERANKER.query_instruction
# A sentence-transformers pair template (roles system = the instruction, query, document) that renders what the
# authors' Qwen3VLReranker renders (qwen3_vl_reranker.py:333-376 through the ChatML above): their system turn, one
# user turn "<Instruct>: I<Query>:[image][text]\n<Document>:[image][text]", then the assistant's turn opened.
RERANKER_TEMPLATE = (
    "{% macro render(content) %}" + _QWEN_CONTENT + "{% endmacro %}"
    "{% set ns = namespace(instruction='" + RERANKER_DEFAULT_INSTRUCTION + "') %}"
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{% set ns.instruction = render(message['content']) %}{% endif %}{% endfor %}"
    "<|im_start|>system{{ '\n' }}" + RERANKER_SYSTEM + "<|im_end|>{{ '\n' }}<|im_start|>user{{ '\n' }}"
    "<Instruct>: {{ ns.instruction }}<Query>:"
    "{% for message in messages %}{% if message['role'] == 'query' %}{{ render(message['content']) }}{% endif %}"
    "{% endfor %}{{ '\n' }}<Document>:"
    "{% for message in messages %}{% if message['role'] == 'document' %}{{ render(message['content']) }}{% endif %}"
    "{% endfor %}<|im_end|>{{ '\n' }}<|im_start|>assistant{{ '\n' }}"
)

# The 2B and 8B layouts of Qwen/Qwen3-VL-2B-Instruct and Qwen/Qwen3-VL-8B-Instruct (which Qwen3-VL-Embedding and
# -Reranker 2B/8B are trained from), written down without their config.json at hand: the 8B's 8.77B parameters match
# its model card, the 2B's vision tower matches public code; check against config.json before quoting a GPU figure.
# And a tiny one of the same layout.
_ROPE = {"rope_type": "default", "mrope_interleaved": True}
QWEN3_VL_SIZES = {
    "tiny": {
        "text": dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
            max_position_embeddings=8192,
            rope_parameters={**_ROPE, "rope_theta": 10000.0, "mrope_section": [4, 2, 2]},
        ),
        "vision": dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=32,
            num_position_embeddings=16,
            deepstack_visual_indexes=[1],
        ),
        "tie_word_embeddings": False,
        "vocab_size": None,  # the tokenizer's
    },
    "2b": {
        "text": dict(
            hidden_size=2048,
            intermediate_size=6144,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=262144,
            rope_parameters={**_ROPE, "rope_theta": 5000000.0, "mrope_section": [24, 20, 20]},
        ),
        "vision": dict(
            depth=24,
            hidden_size=1024,
            intermediate_size=4096,
            num_heads=16,
            out_hidden_size=2048,
            num_position_embeddings=2304,
            deepstack_visual_indexes=[5, 11, 17],
        ),
        "tie_word_embeddings": True,
        "vocab_size": 151936,
    },
    "8b": {
        "text": dict(
            hidden_size=4096,
            intermediate_size=12288,
            num_hidden_layers=36,
            num_attention_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=262144,
            rope_parameters={**_ROPE, "rope_theta": 5000000.0, "mrope_section": [24, 20, 20]},
        ),
        "vision": dict(
            depth=27,
            hidden_size=1152,
            intermediate_size=4304,
            num_heads=16,
            out_hidden_size=4096,
            num_position_embeddings=2304,
            deepstack_visual_indexes=[8, 16, 24],
        ),
        "tie_word_embeddings": False,
        "vocab_size": 151936,
    },
}


def qwen3_vl_parts(words=(), padding_side="right", chat_template=QWEN_TEMPLATE, size: str = "tiny"):
    """(processor, config) of a Qwen3-VL of the real layout at ``size`` (``QWEN3_VL_SIZES``): byte-level tokenizer
    (plus ``words`` as whole tokens; the real checkpoints' vocabulary size, so token ids stay in range), Qwen2-VL
    image processor (16-pixel patches, 2x2 merge, the authors' pixel budget at the real sizes), Qwen3-VL video
    processor (it needs torchvision), interleaved M-RoPE, deepstack."""
    from transformers import Qwen2TokenizerFast
    from transformers import Qwen3VLConfig
    from transformers import Qwen3VLProcessor
    from transformers.convert_slow_tokenizer import bytes_to_unicode
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    shape = QWEN3_VL_SIZES[size]
    vocab = {char: index for index, char in enumerate(bytes_to_unicode().values())}
    vocab.update({token: len(vocab) + i for i, token in enumerate([*words, *QWEN_SPECIAL])})
    tokenizer = Qwen2TokenizerFast(
        vocab=vocab, merges=[], additional_special_tokens=QWEN_SPECIAL[1:], padding_side=padding_side
    )
    pixels = (
        {"shortest_edge": 32 * 32, "longest_edge": 64 * 64}
        if size == "tiny"
        else {
            "shortest_edge": 4 * 32 * 32,
            "longest_edge": 1800 * 32 * 32,
        }
    )
    image_processor = Qwen2VLImageProcessorPil(size=pixels, patch_size=16, merge_size=2, temporal_patch_size=2)
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(),
        chat_template=chat_template,
    )
    config = Qwen3VLConfig(
        text_config=dict(vocab_size=shape["vocab_size"] or len(vocab), **shape["text"]),
        vision_config=dict(patch_size=16, spatial_merge_size=2, temporal_patch_size=2, **shape["vision"]),
        image_token_id=vocab["<|image_pad|>"],
        video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"],
        vision_end_token_id=vocab["<|vision_end|>"],
        tie_word_embeddings=shape["tie_word_embeddings"],
    )
    return processor, config


def tiny_qwen3_vl_parts(words=(), padding_side="right", chat_template=QWEN_TEMPLATE):
    """``qwen3_vl_parts`` at the tiny size: 2 layers, 32-d."""
    return qwen3_vl_parts(words, padding_side, chat_template, "tiny")


def _random_model(model_class, config, seed: int, device=None):
    """``model_class(config)`` with random weights: on ``device`` (a GPU initialises the 8B in seconds) in bfloat16
    when one is given, else on CPU in float32."""
    import torch

    torch.manual_seed(seed)
    if device is None:
        return model_class(config).eval()
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(device):
            return model_class(config).eval()
    finally:
        torch.set_default_dtype(default)


def _at_size(model_folder: Path, model_class, processor, config, seed: int, device) -> None:
    """Replace the tiny backbone of a saved sentence-transformers model (its modules.json and module folders kept)
    with a random one of ``config``: written once, where the model's loader reads it, never loaded back here."""
    for stale in model_folder.glob("model*.safetensors*"):
        stale.unlink()
    _random_model(model_class, config, seed, device).save_pretrained(model_folder)
    processor.save_pretrained(model_folder)
    pooling = model_folder / "1_Pooling" / "config.json"
    if pooling.is_file():
        settings = json.loads(pooling.read_text(encoding="utf-8"))
        settings["embedding_dimension"] = config.text_config.hidden_size
        pooling.write_text(json.dumps(settings, indent=4), encoding="utf-8")


def build_qwen3_vl_embedding(folder, seed: int = 2, size: str = "tiny", device=None) -> Path:
    """A Qwen3-VL (``qwen3_vl_parts`` at ``size``) last-token pooled and L2-normalised like Qwen3-VL-Embedding, as a
    sentence-transformers model that takes image + text as one input. ``device``: where the random weights are
    drawn (bfloat16 there; the real sizes are best drawn on a GPU)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import Qwen3VLModel

    folder = Path(folder)
    processor, config = qwen3_vl_parts()
    _random_model(Qwen3VLModel, config, seed).save_pretrained(folder / "backbone")
    processor.save_pretrained(folder / "backbone")
    transformer = Transformer(str(folder / "backbone"))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="lasttoken")
    SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu").save(str(folder / "model"))
    if size != "tiny":
        _remove(folder / "backbone")
        _at_size(folder / "model", Qwen3VLModel, *qwen3_vl_parts(size=size), seed, device)
    return mark_random_weights(folder / "model")


def build_qwen3_vl_reranker(folder, seed: int = 4, size: str = "tiny", device=None) -> Path:
    """A Qwen3-VL (``qwen3_vl_parts`` at ``size``, "yes" and "no" whole tokens, left padding as the authors' reranker
    pads, qwen3_vl_reranker.py:109) with its LM head, as a sentence-transformers CrossEncoder: the any-to-any
    Transformer rendering pairs with the named ``reranker`` chat template, then LogitScore(yes, no)."""
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder.modules import LogitScore
    from sentence_transformers.cross_encoder.modules import Transformer
    from transformers import Qwen3VLForConditionalGeneration

    folder = Path(folder)
    templates = {"default": QWEN_TEMPLATE, "reranker": RERANKER_TEMPLATE}
    layout = dict(words=["yes", "no"], padding_side="left", chat_template=templates)
    processor, config = qwen3_vl_parts(**layout)
    _random_model(Qwen3VLForConditionalGeneration, config, seed).save_pretrained(folder / "backbone")
    processor.save_pretrained(folder / "backbone")
    transformer = Transformer(
        str(folder / "backbone"),
        transformer_task="any-to-any",
        processing_kwargs={"chat_template": {"chat_template": "reranker"}},
    )
    vocab = processor.tokenizer.get_vocab()
    model = CrossEncoder(modules=[transformer, LogitScore(vocab["yes"], vocab["no"])], device="cpu")
    model.save(str(folder / "model"))
    if size != "tiny":
        _remove(folder / "backbone")
        model_class = Qwen3VLForConditionalGeneration
        _at_size(folder / "model", model_class, *qwen3_vl_parts(**layout, size=size), seed, device)
    return mark_random_weights(folder / "model")


def build_tiny_qwen3_vl_embedding(folder, seed: int = 2) -> Path:
    """``build_qwen3_vl_embedding`` at the tiny size."""
    return build_qwen3_vl_embedding(folder, seed)


def build_tiny_qwen3_vl_reranker(folder, seed: int = 4) -> Path:
    """``build_qwen3_vl_reranker`` at the tiny size."""
    return build_qwen3_vl_reranker(folder, seed)


def build_tiny_llava_reranker(folder, seed: int = 3) -> Path:
    """A generative multimodal reranker like Qwen3-VL-Reranker, but tiny and torchvision-free: a 2-layer LLaVA
    (CLIP vision tower, Qwen2 text model, byte-level tokenizer with "yes" and "no" tokens), saved as a
    sentence-transformers CrossEncoder (multimodal LM + LogitScore: logit("yes") - logit("no"))."""
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder.modules import LogitScore
    from sentence_transformers.cross_encoder.modules import Transformer
    from transformers import LlavaConfig
    from transformers import LlavaForConditionalGeneration
    from transformers import LlavaProcessor
    from transformers import Qwen2TokenizerFast
    from transformers.convert_slow_tokenizer import bytes_to_unicode
    from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil

    folder = Path(folder)
    vocab = {char: index for index, char in enumerate(bytes_to_unicode().values())}
    vocab.update({token: len(vocab) + i for i, token in enumerate(["yes", "no", *QWEN_SPECIAL])})
    tokenizer = Qwen2TokenizerFast(vocab=vocab, merges=[], additional_special_tokens=QWEN_SPECIAL[1:])
    processor = LlavaProcessor(
        image_processor=LlavaImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tokenizer,
        patch_size=8,
        num_additional_image_tokens=1,
        vision_feature_select_strategy="default",
        image_token="<|image_pad|>",
        chat_template=QWEN_TEMPLATE,
    )
    config = LlavaConfig(
        vision_config=dict(
            model_type="clip_vision_model",
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
        text_config=dict(
            model_type="qwen2",
            vocab_size=len(vocab),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=4096,
        ),
        image_token_id=vocab["<|image_pad|>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    LlavaForConditionalGeneration(config).eval().save_pretrained(folder / "backbone")
    processor.save_pretrained(folder / "backbone")
    transformer = Transformer(str(folder / "backbone"), transformer_task="any-to-any")
    model = CrossEncoder(modules=[transformer, LogitScore(vocab["yes"], vocab["no"])], device="cpu")
    model.save(str(folder / "model"))
    return mark_random_weights(folder / "model")


def has_torchvision() -> bool:
    """Whether torchvision is installed (Qwen3-VL's processor needs it)."""
    from importlib.util import find_spec

    return find_spec("torchvision") is not None


def make_tiny_models(folder, texts, m2kr_texts=()) -> dict:
    """The tiny models a first offline run needs, under ``folder``, named so that their presets follow from their
    names: a Qwen3-VL embedder and reranker where torchvision is installed, else a Chinese-CLIP dual encoder and a
    LLaVA CrossEncoder reranker; and a tiny PreFLMR (its vocabulary made of ``m2kr_texts``' words) with its CLIP
    image processor. Returns {"embedding": path, "reranker": path, "backend": ..., "preflmr": path,
    "preflmr_image_processor": path}; a ``tiny-models.json`` beside them says the same."""
    folder = Path(folder)
    if has_torchvision():
        made = {
            "backend": "sentence-transformers",
            "embedding": str(
                build_qwen3_vl_embedding(folder / "build-embedding").rename(folder / "Qwen3-VL-Embedding-tiny")
            ),
            "reranker": str(
                build_qwen3_vl_reranker(folder / "build-reranker").rename(folder / "Qwen3-VL-Reranker-tiny")
            ),
        }
    else:
        made = {
            "backend": "transformers",
            "embedding": str(build_tiny_chinese_clip(folder / "chinese-clip-tiny", texts)),
            "reranker": str(
                build_tiny_llava_reranker(folder / "build-reranker").rename(folder / "llava-reranker-tiny")
            ),
        }
    preflmr = build_preflmr(folder / "PreFLMR-tiny", texts=m2kr_texts)
    made["preflmr"] = str(preflmr)
    made["preflmr_image_processor"] = str(preflmr / PREFLMR_PROCESSOR)
    for leftover in ("build-embedding", "build-reranker"):
        _remove(folder / leftover)
    (folder / "tiny-models.json").write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    return made


def _remove(path: Path) -> None:
    import shutil

    if path.exists():
        shutil.rmtree(path)


PREFLMR_SIZES = {
    # text: BertConfig; vision: CLIPVisionConfig; the layout flags are PreFLMR_ViT-G's (issue 35)
    "tiny": dict(
        text=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
        vision=dict(
            hidden_size=24,
            intermediate_size=48,
            num_hidden_layers=3,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
            hidden_act="gelu",
        ),
        dim=16,
        vocab_size=None,  # the tiny wordpiece vocabulary's size
    ),
    "vit-g": dict(
        text=dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
        vision=dict(
            hidden_size=1664,
            intermediate_size=8192,
            num_hidden_layers=48,
            num_attention_heads=16,
            image_size=224,
            patch_size=14,
            hidden_act="gelu",
            projection_dim=1280,
        ),
        dim=128,
        vocab_size=30522,  # bert-base-uncased's
    ),
}
PREFLMR_PROCESSOR = "clip-image-processor"  # the CLIP image processor's folder, inside the checkpoint's
PREFLMR_SHARD_BYTES = {"tiny": 150_000, "vit-g": 2_000_000_000}  # several shards at either size


BERT_SPECIAL = {
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
}
# the keywords the authors' tokenizer classes keep (tokenization_flmr.py:101-111, 177-193)
PREFLMR_TOKENIZERS = {
    "query_tokenizer": {
        "tokenizer_class": "FLMRBertQueryEncoderTokenizer",
        "query_maxlen": 32,
        "attend_to_mask_tokens": False,
    },
    "context_tokenizer": {"tokenizer_class": "FLMRBertContextEncoderTokenizer", "doc_maxlen": 512},
}
PREFLMR_WORDS = 3000  # the most frequent words of the texts given, whole in the tiny vocabulary


def preflmr_vocab(texts=(), size: int | None = None) -> list:
    """A BERT wordpiece vocabulary with PreFLMR's markers ([unused0] for queries, [unused1] for passages), [MASK],
    every ASCII punctuation character and letter, and the texts' most frequent words (so that an instruction and
    its ":" fit in 32 tokens, as with BERT's vocabulary); filled with [unusedN] up to ``size``."""
    import re
    from collections import Counter

    tokens = list(wordpiece_vocab(texts))
    counts = Counter(word for text in texts for word in re.findall(r"[a-z0-9]+", text.lower()))
    known = set(tokens)
    words = sorted(counts, key=lambda word: (-counts[word], word))
    tokens += [word for word in words if word not in known][:PREFLMR_WORDS]
    tokens[len(SPECIAL_TOKENS) : len(SPECIAL_TOKENS)] = ["[unused0]", "[unused1]"]
    if size is not None:
        tokens += [f"[unused{i}]" for i in range(2, 2 + size - len(tokens))]
    return tokens


def m2kr_sample_texts(sample_dir) -> list:
    """The bundled M2KR sample's instructions, questions and passages, in file order (the tiny PreFLMR's
    vocabulary is made of their words)."""
    import pyarrow.parquet as pq

    sample_dir = Path(sample_dir)
    texts = []
    for path in sorted((sample_dir / "challenge_data").glob("*.parquet")):
        table = pq.read_table(path, columns=["instruction", "question"])
        texts += [text for column in table.columns for text in column.to_pylist() if text]
    for path in sorted((sample_dir / "challenge_passage").glob("*.parquet")):
        texts += [text for text in pq.read_table(path, columns=["passage_content"]).column(0).to_pylist() if text]
    return texts


def preflmr_config(size: str, vocab_size: int) -> dict:
    """config.json of a PreFLMR checkpoint (model type ``flmr``) with ViT-G's layout at ``size``."""
    geometry = PREFLMR_SIZES[size]
    return {
        "architectures": ["FLMRModelForRetrieval"],
        "model_type": "flmr",
        "text_config": {**geometry["text"], "vocab_size": vocab_size, "text_encoder_base_model": "bert-base-uncased"},
        "vision_config": geometry["vision"],
        "dim": geometry["dim"],
        "mapping_network_prefix_length": 32,
        "mask_punctuation": True,
        "mask_instruction_token": ":",
        "separate_query_and_context_text_encoder": True,
        "separate_query_and_context_vision_encoder": False,
        "query_concat_output_from_vision_encoder": True,
        "query_concat_output_from_text_encoder": True,
        "context_concat_output_from_vision_encoder": False,
        "context_concat_output_from_text_encoder": True,
        "use_vision_encoder": True,
        "use_transformer_mapping_network": True,
        # a folder next to config.json at the tiny size (the mapping network has the tiny text encoder's width);
        # bert-base-uncased, as the real ViT-G's, at full size
        "transformer_mapping_config_base": "mapping_base" if size == "tiny" else "bert-base-uncased",
        "transformer_mapping_num_hidden_layers": 1,
        "transformer_mapping_cross_attention_length": 32,
        "vision_model_version": "laion/CLIP-ViT-bigG-14-laion2B-39B-b160k",
        "query_mask_input_ids_skip_list": [],
    }


def build_preflmr(folder, size: str = "tiny", device=None, seed: int = 5, texts=()) -> Path:
    """A PreFLMR checkpoint of the real layout with random weights: config.json (model type ``flmr``, ViT-G's
    flags), sharded safetensors with model.safetensors.index.json under the authors' tensor names (a tensor they
    hold under two names stored once), query_tokenizer/ and context_tokenizer/ (BERT wordpiece, with the
    authors' query_maxlen / doc_maxlen), and a CLIP image processor in ``clip-image-processor/`` (give it as
    ``--image-processor``). ``size``: ``tiny`` (2-layer text encoders, 3-layer 28-pixel vision tower) or ``vit-g``
    (ViT-G's vision tower, BERT-base text encoders; drawn on ``device`` in bfloat16 when one is given)."""
    from safetensors.torch import save_file
    from transformers import BertConfig
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    from mmrhub.retrieve.late_interaction.preflmr.checkpoint import INDEX
    from mmrhub.retrieve.late_interaction.preflmr.checkpoint import candidates
    from mmrhub.retrieve.late_interaction.preflmr.checkpoint import stored_prefixes
    from mmrhub.retrieve.late_interaction.preflmr.config import read_config
    from mmrhub.retrieve.late_interaction.preflmr.model import PreFLMRModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    geometry = PREFLMR_SIZES[size]
    vocab = preflmr_vocab(texts, geometry["vocab_size"])
    for sub, settings in PREFLMR_TOKENIZERS.items():  # as the authors' tokenizers save themselves (transformers 4.x)
        (folder / sub).mkdir(exist_ok=True)
        (folder / sub / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
        (folder / sub / "special_tokens_map.json").write_text(json.dumps(BERT_SPECIAL, indent=2), encoding="utf-8")
        config = {**BERT_SPECIAL, "do_lower_case": True, "model_max_length": 512, **settings}
        (folder / sub / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    config = preflmr_config(size, len(vocab))
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    if size == "tiny":
        BertConfig(**geometry["text"]).save_pretrained(folder / "mapping_base")
    image_size = geometry["vision"]["image_size"]
    CLIPImageProcessorPil(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    ).save_pretrained(folder / PREFLMR_PROCESSOR)
    settings = read_config(folder)
    model = _random_model(PreFLMRModel, settings, seed, device)
    prefixes = stored_prefixes(settings)
    tensors = {candidates(name, prefixes)[0]: value.contiguous() for name, value in model.state_dict().items()}
    _save_shards(folder, tensors, PREFLMR_SHARD_BYTES[size], save_file, INDEX)
    return mark_random_weights(folder)


def _save_shards(folder: Path, tensors: dict, shard_bytes: int, save_file, index_name: str) -> None:
    """``tensors`` in safetensors shards of about ``shard_bytes`` and the index transformers writes."""
    shards, current, size = [], {}, 0
    for name, tensor in tensors.items():
        if current and size + tensor.nbytes > shard_bytes:
            shards.append(current)
            current, size = {}, 0
        current[name] = tensor.cpu()
        size += tensor.nbytes
    shards.append(current)
    weight_map = {}
    for number, shard in enumerate(shards, 1):
        filename = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(folder / filename), metadata={"format": "pt"})
        weight_map.update({name: filename for name in shard})
    total = sum(tensor.nbytes for tensor in tensors.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / index_name).write_text(json.dumps(index, indent=2), encoding="utf-8")
