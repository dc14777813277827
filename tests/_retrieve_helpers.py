"""Tiny randomly initialised models, built offline and saved like real checkpoints (loaded via ``--model PATH``)."""

import json
import shutil
import string
import subprocess
import sys
from pathlib import Path

from _mipr_helpers import read_jsonl
from _mipr_helpers import write_jsonl
from _paths import MIPR_SAMPLE

# Queries the retrieve tests add to the MIPR sample (the mipr_dir fixture): a corpus item's own image and title,
# and the first query's image with an empty question.
SELF_QUERY, IMAGE_ONLY_QUERY = "9001", "9002"


def mipr_with_self_queries(folder) -> dict:
    """A copy of the MIPR sample in ``folder`` plus SELF_QUERY and IMAGE_ONLY_QUERY, judged; what the tests need
    to know of it."""
    shutil.copytree(MIPR_SAMPLE, folder)
    corpus = read_jsonl(folder / "mipr_corpus.jsonl")
    queries = read_jsonl(folder / "mipr_query.jsonl")
    item = corpus[len(corpus) // 2]
    images = folder / "images"
    shutil.copy(images / "product_images" / item["pict_url"], images / "query_images" / "self.jpg")
    queries.append({"idx": SELF_QUERY, "query": item["title"], "image_url": "self.jpg"})
    queries.append({"idx": IMAGE_ONLY_QUERY, "query": "", "image_url": queries[0]["image_url"]})
    write_jsonl(folder / "mipr_query.jsonl", queries)
    qrels = read_jsonl(folder / "mipr_annotation.jsonl")
    qrels.append({"idx": SELF_QUERY, "items": [{"item_id": item["item_id"], "final_grade": "L1"}]})
    qrels.append({"idx": IMAGE_ONLY_QUERY, "items": [{"item_id": corpus[0]["item_id"], "final_grade": "L2"}]})
    write_jsonl(folder / "mipr_annotation.jsonl", qrels)
    return {"dir": folder, "self_item": item["item_id"], "num_queries": len(queries), "num_corpus": len(corpus)}


def retrieve(tmp_path, *options, name="run.json"):
    """``mmrhub retrieve`` in-process; the run path, parsed run and per-phase stats."""
    from mmrhub.commands.retrieve import build_parser
    from mmrhub.commands.retrieve import retrieve_options
    from mmrhub.retrieve.pipeline import run

    output, stats = tmp_path / name, tmp_path / f"{name}.stats.json"
    argv = [*map(str, options), "--output", str(output), "--stats-json", str(stats), "--num-workers", "0"]
    if run(retrieve_options(build_parser().parse_args(argv))) != 0:
        raise RuntimeError(f"retrieve {argv} did not exit 0")
    return output, json.loads(output.read_text()), json.loads(stats.read_text())


def top(run, qid):
    """Query ``qid``'s ranking in a parsed run."""
    return next(entry["ranked"] for entry in run if entry["qid"] == qid)


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_vocab(texts) -> dict:
    """Every character of the texts, plus ``##`` pieces so Latin words split into letters."""
    chars = sorted({c for text in texts for c in text.lower() if not c.isspace()} | set(string.printable.strip()))
    pieces = ["##" + c for c in string.ascii_lowercase + string.digits]
    return {token: index for index, token in enumerate(SPECIAL_TOKENS + chars + pieces)}


def build_tiny_chinese_clip(folder, texts, seed: int = 0) -> Path:
    """A 2-layer Chinese-CLIP (BERT text tower, ViT image tower), 32-d projections, with its processor."""
    import torch
    from transformers import BertTokenizerFast
    from transformers import ChineseCLIPConfig
    from transformers import ChineseCLIPModel
    from transformers import ChineseCLIPProcessor
    from transformers.models.chinese_clip.image_processing_pil_chinese_clip import ChineseCLIPImageProcessorPil

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = BertTokenizerFast(vocab=wordpiece_vocab(texts), do_lower_case=True)
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
            image_size=32,
            patch_size=8,
        ),
        projection_dim=32,
    )
    torch.manual_seed(seed)
    ChineseCLIPModel(config).eval().save_pretrained(folder)
    image_processor = ChineseCLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    ChineseCLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    return folder


def build_tiny_sentence_transformer(folder, texts, seed: int = 1) -> Path:
    """A sentence-transformers model (Transformer module over a tiny Chinese-CLIP, then Normalize), saved to disk."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize
    from sentence_transformers.base.modules import Transformer

    folder = Path(folder)
    backbone = build_tiny_chinese_clip(folder / "backbone", texts, seed=seed)
    model = SentenceTransformer(modules=[Transformer(str(backbone)), Normalize()], device="cpu")
    model.save(str(folder / "model"))
    return folder / "model"


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
RERANKER_SYSTEM = (
    "Judge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the "
    'answer can only be "yes" or "no".'
)
RERANKER_DEFAULT_INSTRUCTION = "Given a search query, retrieve relevant candidates that answer the query."
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


def tiny_qwen3_vl_parts(words=(), padding_side="right", chat_template=QWEN_TEMPLATE):
    """(processor, config) of a 2-layer, 32-d Qwen3-VL with the real layout: byte-level tokenizer (plus ``words`` as
    whole tokens), Qwen2-VL image processor (16-pixel patches, 2x2 merge), Qwen3-VL video processor (it needs
    torchvision), interleaved M-RoPE, deepstack."""
    from transformers import Qwen2TokenizerFast
    from transformers import Qwen3VLConfig
    from transformers import Qwen3VLProcessor
    from transformers.convert_slow_tokenizer import bytes_to_unicode
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    vocab = {char: index for index, char in enumerate(bytes_to_unicode().values())}
    vocab.update({token: len(vocab) + i for i, token in enumerate([*words, *QWEN_SPECIAL])})
    tokenizer = Qwen2TokenizerFast(
        vocab=vocab, merges=[], additional_special_tokens=QWEN_SPECIAL[1:], padding_side=padding_side
    )
    image_processor = Qwen2VLImageProcessorPil(
        size={"shortest_edge": 32 * 32, "longest_edge": 64 * 64}, patch_size=16, merge_size=2, temporal_patch_size=2
    )
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=Qwen3VLVideoProcessor(),
        chat_template=chat_template,
    )
    config = Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(vocab),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
            max_position_embeddings=512,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [4, 2, 2],
                "mrope_interleaved": True,
            },
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            out_hidden_size=32,
            num_position_embeddings=16,
            deepstack_visual_indexes=[1],
        ),
        image_token_id=vocab["<|image_pad|>"],
        video_token_id=vocab["<|video_pad|>"],
        vision_start_token_id=vocab["<|vision_start|>"],
        vision_end_token_id=vocab["<|vision_end|>"],
    )
    return processor, config


def build_tiny_qwen3_vl_embedding(folder, seed: int = 2) -> Path:
    """A tiny Qwen3-VL (``tiny_qwen3_vl_parts``) last-token pooled and L2-normalised like Qwen3-VL-Embedding, as a
    sentence-transformers model that takes image + text as one input."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import Qwen3VLModel

    folder = Path(folder)
    processor, config = tiny_qwen3_vl_parts()
    torch.manual_seed(seed)
    Qwen3VLModel(config).eval().save_pretrained(folder / "backbone")
    processor.save_pretrained(folder / "backbone")
    transformer = Transformer(str(folder / "backbone"))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="lasttoken")
    SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu").save(str(folder / "model"))
    return folder / "model"


def build_tiny_qwen3_vl_reranker(folder, seed: int = 4) -> Path:
    """A tiny Qwen3-VL (``tiny_qwen3_vl_parts``, "yes" and "no" whole tokens, left padding as the authors' reranker
    pads, qwen3_vl_reranker.py:109) with its LM head, as a sentence-transformers CrossEncoder: the any-to-any
    Transformer rendering pairs with the named ``reranker`` chat template, then LogitScore(yes, no)."""
    import torch
    from sentence_transformers import CrossEncoder
    from sentence_transformers.cross_encoder.modules import LogitScore
    from sentence_transformers.cross_encoder.modules import Transformer
    from transformers import Qwen3VLForConditionalGeneration

    folder = Path(folder)
    templates = {"default": QWEN_TEMPLATE, "reranker": RERANKER_TEMPLATE}
    processor, config = tiny_qwen3_vl_parts(["yes", "no"], padding_side="left", chat_template=templates)
    torch.manual_seed(seed)
    Qwen3VLForConditionalGeneration(config).eval().save_pretrained(folder / "backbone")
    processor.save_pretrained(folder / "backbone")
    transformer = Transformer(
        str(folder / "backbone"),
        transformer_task="any-to-any",
        processing_kwargs={"chat_template": {"chat_template": "reranker"}},
    )
    vocab = processor.tokenizer.get_vocab()
    model = CrossEncoder(modules=[transformer, LogitScore(vocab["yes"], vocab["no"])], device="cpu")
    model.save(str(folder / "model"))
    return folder / "model"


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
    return folder / "model"


def one_and_two_processes(script, options: list, env: dict, tmp_path):
    """(the run one process writes, the run ``torchrun`` with two processes writes, the latter's stdout)."""
    single, double = tmp_path / "one.json", tmp_path / "two.json"
    subprocess.run(
        [sys.executable, str(script), *options, "--output", str(single)], check=True, env=env, capture_output=True
    )
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    done = subprocess.run(
        [*torchrun, str(script), *options, "--output", str(double)],
        env=env,
        capture_output=True,
        timeout=300,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return single, double, done.stdout
