"""The one FLOP model behind every GPU estimate that README.md, docs/retrieve.md and bench/ quote.

    python bench/flop_model.py          # each estimate with its derivation (TFLOP per item, items/s, times)

Estimates, not measurements: ``bench/gpu_check.sh`` measures the same rates on a lent GPU, prints each beside the
estimate of this model for the exact shapes it ran, and its figures replace these wherever they are quoted.

Assumptions (each one a constant below):
  - One H200 sustains ``SUSTAINED_TFLOPS`` = 400 TFLOP/s in bf16/fp16 matrix products (about 40% of its dense
    989 TFLOP/s peak), ``SUSTAINED_FP32_TFLOPS`` = 50 in float32 without TF32 (peak 67), and ``SUSTAINED_HBM_TBPS`` =
    3.5 TB/s of its 4.8 TB/s memory bandwidth. Time = FLOPs / rate: no overlap with the feed, which
    ``bench/feed_cpu.py`` shows a 16-core host keeps ahead.
  - A forward pass costs 2 FLOPs per multiply-add of every matrix product; normalisation, activations, rotary
    embeddings and softmax are left out (under 2% at these widths).
  - Attention is counted as the two products QK^T and AV: 4 x n x width FLOPs per token for n tokens it attends
    to. The vision tower attends over all patches of its image (quadratic in patches); the language model is
    causal (a token attends to the ones before it: n/2 on average, as flash/SDPA kernels skip the masked half).
  - The reranker's shared prefix (``mmrhub/retrieve/rerank/shared_forward.py``): per query, the vision tower on its
    image and the language model on its prefix (template, instruction, image, question) once, for its
    ``RERANK_CANDIDATES`` candidates; per pair, the candidate's image through the vision tower and its suffix (image
    tokens, text, closing template) through the language model, each suffix token attending to the whole prefix
    and the suffix before it.
  - Qwen3-VL (``scripts/tiny_models.py`` ``QWEN3_VL_SIZES``, the published 2B / 8B layouts): the image resized as
    the Qwen2-VL processor does (``smart_resize``: sides multiples of 32, ``min_pixels`` <= h x w <= ``max_pixels``
    of the preset), cut in 16-pixel patches (two identical frames of 3 x 16 x 16: a 1536-wide patch embedding);
    every vision layer runs on every patch; 2x2 patches merge into one language-model token (the main merger and
    one per deepstack layer, each LayerNorm + 4w -> 4w -> out MLP); the language model runs on image tokens plus
    text tokens (template, instruction, text). Embedding: no LM head (last-token pooling). Reranker: one sequence
    per pair holding both images, the LM head on its last token only (sentence-transformers' LogitScore keeps
    one position), so the query image's vision tower runs again for each of its 50 pairs.
  - Text tokens (the real tokenizer is not at hand offline): ``TEXT_TOKENS`` below, e.g. a MIPR title ~25 tokens,
    an M2KR passage ~500.
  - PreFLMR ViT-G (LinWeizheDragon/FLMR flmr/models/flmr/modeling_flmr.py): a query is the CLIP ViT-bigG/14 vision
    tower at 224 px (256 patches + CLS, 48 layers, 1664 wide, MLP 8192), the BERT-base query encoder over
    ``query_maxlen`` 32 tokens, the CLS through a 1664 -> 2048 -> 4096 MLP (32 vectors), and the penultimate
    layer's 256 patch states through a 1664 -> 768 linear, one BERT layer with cross-attention to the first 32
    text states, and 768 -> 128 (lines 1133-1164): 32 + 32 + 256 = 320 query vectors of 128. A passage is the
    BERT-base context encoder over ``doc_maxlen`` 512 tokens (text only) and 768 -> 128.
  - MaxSim (``mmrhub/retrieve/late_interaction/maxsim.py``): exact, every query vector against every kept passage token:
    2 x 320 x tokens x 128 FLOPs a query, plus the token-score matrix written and read once (2 bytes each way in
    fp16), at the bandwidth above. 47,318 passages x ``PASSAGE_KEPT_TOKENS`` (512, the upper bound: doc_maxlen).
"""

import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.append(str(ROOT))  # last: an installed mmrhub comes first
from tiny_models import QWEN3_VL_SIZES  # noqa: E402  (the real 2B / 8B layouts, one source)

from mmrhub.retrieve.presets import QWEN3_VL_EMBEDDING  # noqa: E402  (the image budget the authors use)

SUSTAINED_TFLOPS = 400.0
SUSTAINED_FP32_TFLOPS = 50.0
SUSTAINED_HBM_TBPS = 3.5

# Text tokens besides the image's, per input (the chat template and instruction included).
TEXT_TOKENS = {
    "mipr corpus": 20 + 25,  # template, a product title (~30 Chinese characters)
    "mipr query": 20 + 12 + 12,  # template, the query instruction, a question
    "m2kr corpus": 20 + 500,  # template, a passage
    "m2kr query": 20 + 25 + 10,  # template, the task's instruction, a question (47% have one)
    "rerank template": 60,  # the reranker's system turn, <Instruct>, <Query>, <Document>
}
# Image sizes (width, height): MIPR's product and query photos, an M2KR web screenshot, an M2KR query photo.
IMAGES = {"mipr photo": (800, 800), "m2kr screenshot": (1024, 2000), "m2kr photo": (640, 480)}
# A reranked pair's images: (the query's, the candidate's).
RERANK_IMAGES = {"mipr": ("mipr photo", "mipr photo"), "m2kr": ("m2kr photo", "m2kr screenshot")}
RERANK_CANDIDATES = 50  # pairs a query: the baseline's top-50
RERANK_CLOSING = 6  # the pair's tokens after the candidate's text: end of turn, the assistant's turn opened
COUNTS = {
    "mipr corpus": 30_731,
    "mipr queries": 3_522,
    "mipr pairs": 3_522 * 50,
    "m2kr corpus": 47_318,
    "m2kr queries": 6_415,
}
PREFLMR = dict(
    vision=dict(layers=48, width=1664, mlp=8192, patch=14, image=224),
    bert=dict(layers=12, width=768, mlp=3072),
    query_maxlen=32,
    doc_maxlen=512,
    dim=128,
    prefix=32,  # mapping_network_prefix_length: the CLS MLP's vectors
    cross_attention_length=32,
)
PASSAGE_KEPT_TOKENS = 512


def smart_resize(width: int, height: int, min_pixels: int, max_pixels: int, factor: int = 32) -> tuple:
    """(width, height) as the Qwen2-VL image processor resizes: sides multiples of ``factor`` (patch 16 x merge
    2), the area brought within [min_pixels, max_pixels] keeping the aspect ratio."""
    h, w = max(factor, round(height / factor) * factor), max(factor, round(width / factor) * factor)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h, w = math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h, w = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return w, h


def transformer_layer(tokens: float, width: int, mlp: int, attended: float, qkv: int = None, gated=False) -> float:
    """Forward FLOPs of one layer over ``tokens`` tokens, each attending to ``attended`` tokens: projections
    (``qkv``: the q + k + v output width, default 3 x width; the output projection width x width), the MLP (two
    matrices, three if ``gated``) and attention's two products."""
    qkv = qkv or 3 * width
    projections = 2 * width * qkv + 2 * width * width
    mlp_flops = (3 if gated else 2) * 2 * width * mlp
    return tokens * (projections + mlp_flops + 4 * attended * width)


@dataclass(frozen=True)
class Cost:
    """TFLOP of one item, by part."""

    vision: float
    language: float

    @property
    def total(self) -> float:
        return self.vision + self.language

    def per_second(self, tflops: float = SUSTAINED_TFLOPS) -> float:
        return tflops / self.total


def qwen_image_tokens(size: str, image: tuple) -> tuple:
    """(patches, language-model tokens) of one image at the preset's budget."""
    w, h = smart_resize(*image, QWEN3_VL_EMBEDDING.min_pixels, QWEN3_VL_EMBEDDING.max_pixels)
    patches = (w // 16) * (h // 16)
    return patches, patches // 4


def qwen_vision_tflop(size: str, image: tuple) -> float:
    """One image through the vision tower: patch embedding, every layer on every patch (full attention within
    the image), the mergers (main + deepstack)."""
    v = QWEN3_VL_SIZES[size]["vision"]
    patches, tokens = qwen_image_tokens(size, image)
    width, merged = v["hidden_size"], 4 * v["hidden_size"]
    flops = 2 * 1536 * width * patches
    flops += v["depth"] * transformer_layer(patches, width, v["intermediate_size"], patches)
    mergers = 1 + len(v["deepstack_visual_indexes"])
    flops += mergers * tokens * (2 * merged * merged + 2 * merged * v["out_hidden_size"])
    return flops / 1e12


def qwen_language_tflop(size: str, tokens: int, context: int = 0) -> float:
    """The language model over one sequence of ``tokens`` (causal: n/2 attended on average) after ``context``
    cached tokens (each attends to all of them too), no LM head."""
    t = QWEN3_VL_SIZES[size]["text"]
    width, head = t["hidden_size"], t["head_dim"]
    q, kv = t["num_attention_heads"] * head, t["num_key_value_heads"] * head
    layer = tokens * (2 * width * (q + 2 * kv) + 2 * q * width + 3 * 2 * width * t["intermediate_size"])
    layer += tokens * 4 * (context + tokens / 2) * q
    return t["num_hidden_layers"] * layer / 1e12


def qwen_embed(size: str, image: tuple, text_tokens: int) -> Cost:
    """One embedding input: an image and its text."""
    _, image_tokens = qwen_image_tokens(size, image)
    return Cost(qwen_vision_tflop(size, image), qwen_language_tflop(size, image_tokens + text_tokens))


def qwen_rerank(size: str, query_image: tuple, document_image: tuple, text_tokens: int) -> Cost:
    """One reranked pair: both images through the vision tower, one sequence through the language model, the LM
    head on its last token."""
    tokens = qwen_image_tokens(size, query_image)[1] + qwen_image_tokens(size, document_image)[1] + text_tokens
    head = 2 * QWEN3_VL_SIZES[size]["text"]["hidden_size"] * QWEN3_VL_SIZES[size]["vocab_size"] / 1e12
    vision = qwen_vision_tflop(size, query_image) + qwen_vision_tflop(size, document_image)
    return Cost(vision, qwen_language_tflop(size, tokens) + head)


def rerank_texts(kind: str) -> tuple:
    """(prefix, suffix) text tokens of a ``kind`` ("mipr", "m2kr") pair: the template up to the candidate with the
    query's instruction and question; the candidate's text and the closing template."""
    prefix = TEXT_TOKENS["rerank template"] - RERANK_CLOSING + TEXT_TOKENS[f"{kind} query"] - 20
    return prefix, RERANK_CLOSING + TEXT_TOKENS[f"{kind} corpus"] - 20


def rerank_work(kind: str, candidates: int = RERANK_CANDIDATES) -> dict:
    """Language-model tokens and vision patches a ``kind`` pair costs on each path: the whole pair, or its share of
    its query's prefix (one in ``candidates``) and its own suffix."""
    query, document = (qwen_image_tokens("8b", IMAGES[name]) for name in RERANK_IMAGES[kind])
    prefix_text, suffix_text = rerank_texts(kind)
    prefix, suffix = query[1] + prefix_text, document[1] + suffix_text
    return {
        "whole": {"tokens": prefix + suffix, "patches": query[0] + document[0]},
        "shared": {"tokens": prefix / candidates + suffix, "patches": query[0] / candidates + document[0]},
        "prefix tokens": prefix,
        "suffix tokens": suffix,
    }


def qwen_rerank_shared(
    size: str, query_image: tuple, document_image: tuple, texts: tuple, candidates: int = RERANK_CANDIDATES
) -> Cost:
    """One pair on the shared path: its share of the query's prefix (vision tower and language model, once for
    ``candidates``), then its candidate's image and its suffix against the cached prefix, the LM head on the last
    token. ``texts``: (prefix, suffix) text tokens."""
    prefix = qwen_image_tokens(size, query_image)[1] + texts[0]
    suffix = qwen_image_tokens(size, document_image)[1] + texts[1]
    head = 2 * QWEN3_VL_SIZES[size]["text"]["hidden_size"] * QWEN3_VL_SIZES[size]["vocab_size"] / 1e12
    vision = qwen_vision_tflop(size, query_image) / candidates + qwen_vision_tflop(size, document_image)
    language = qwen_language_tflop(size, prefix) / candidates + qwen_language_tflop(size, suffix, prefix) + head
    return Cost(vision, language)


def bert_tflop(tokens: int, layers: int = 12, width: int = 768, mlp: int = 3072) -> float:
    """A BERT encoder (bidirectional: every token attends to all) over one sequence."""
    return layers * transformer_layer(tokens, width, mlp, tokens) / 1e12


def preflmr_query() -> Cost:
    """One PreFLMR ViT-G query: the vision tower, the text encoder, the CLS MLP and the mapping network."""
    v, b, p = PREFLMR["vision"], PREFLMR["bert"], PREFLMR
    patches = (v["image"] // v["patch"]) ** 2
    tokens = patches + 1
    vision = 2 * 3 * v["patch"] ** 2 * v["width"] * patches
    vision += v["layers"] * transformer_layer(tokens, v["width"], v["mlp"], tokens)
    text = bert_tflop(p["query_maxlen"], b["layers"], b["width"], b["mlp"]) * 1e12
    half = p["dim"] * p["prefix"] // 2
    mlp = 2 * (v["width"] * half + half * p["dim"] * p["prefix"])
    cross = p["cross_attention_length"]
    mapping = 2 * v["width"] * b["width"] * patches  # input linear
    mapping += transformer_layer(patches, b["width"], b["mlp"], patches)  # self-attention and MLP
    mapping += patches * (4 * b["width"] ** 2 + 4 * cross * b["width"]) + cross * 4 * b["width"] ** 2  # cross-attn
    mapping += 2 * b["width"] * p["dim"] * (patches + p["query_maxlen"])  # both outputs to 128
    return Cost(vision / 1e12, (text + mlp + mapping) / 1e12)


def preflmr_query_vectors() -> int:
    """Query vectors MaxSim scores: text tokens, the CLS MLP's prefix, the mapping network's patch outputs."""
    v = PREFLMR["vision"]
    return PREFLMR["query_maxlen"] + PREFLMR["prefix"] + (v["image"] // v["patch"]) ** 2


def preflmr_passage(tokens: int = None) -> Cost:
    """One PreFLMR passage: BERT-base over ``doc_maxlen`` tokens (text only), then 768 -> 128."""
    tokens = tokens or PREFLMR["doc_maxlen"]
    b = PREFLMR["bert"]
    return Cost(
        0.0, bert_tflop(tokens, b["layers"], b["width"], b["mlp"]) + 2 * b["width"] * PREFLMR["dim"] * tokens / 1e12
    )


def maxsim_seconds_per_query(passages: int, kept_tokens: float = PASSAGE_KEPT_TOKENS, itemsize: int = 2) -> dict:
    """Exact MaxSim of one query over ``passages`` of ``kept_tokens`` tokens: its FLOPs, the score matrix's bytes,
    and the time each takes at the sustained rates (added: separate kernels)."""
    tokens = passages * kept_tokens
    vectors = preflmr_query_vectors()
    flops = 2 * vectors * tokens * PREFLMR["dim"]
    traffic = 2 * itemsize * vectors * tokens + tokens * PREFLMR["dim"] * itemsize
    compute_s, memory_s = flops / (SUSTAINED_TFLOPS * 1e12), traffic / (SUSTAINED_HBM_TBPS * 1e12)
    return {"tflop": flops / 1e12, "gbytes": traffic / 1e9, "seconds": compute_s + memory_s}


def rerank_costs(size: str, kind: str) -> dict:
    """A ``kind`` pair's cost on each path: {"": the whole pair, " shared": the shared prefix's}."""
    query, document = (IMAGES[name] for name in RERANK_IMAGES[kind])
    texts = rerank_texts(kind)
    return {
        "": qwen_rerank(size, query, document, sum(texts)),
        " shared": qwen_rerank_shared(size, query, document, texts),
    }


def estimates() -> dict:
    """Every rate and time the docs quote, by name (items/s, pairs/s, queries/s, seconds)."""
    mipr_corpus = {s: qwen_embed(s, IMAGES["mipr photo"], TEXT_TOKENS["mipr corpus"]) for s in ("2b", "8b")}
    mipr_query = {s: qwen_embed(s, IMAGES["mipr photo"], TEXT_TOKENS["mipr query"]) for s in ("2b", "8b")}
    m2kr_corpus = {s: qwen_embed(s, IMAGES["m2kr screenshot"], TEXT_TOKENS["m2kr corpus"]) for s in ("2b", "8b")}
    out = {}
    for s in ("2b", "8b"):
        out[f"embed {s} mipr items/s"] = mipr_corpus[s].per_second()
        out[f"embed {s} mipr queries/s"] = mipr_query[s].per_second()
        out[f"embed {s} m2kr items/s"] = m2kr_corpus[s].per_second()
        for kind in ("mipr", "m2kr"):
            for path, cost in rerank_costs(s, kind).items():
                out[f"rerank {s} {kind}{path} pairs/s"] = cost.per_second()
        embed_s = (
            COUNTS["mipr corpus"] / out[f"embed {s} mipr items/s"]
            + COUNTS["mipr queries"] / out[f"embed {s} mipr queries/s"]
        )
        out[f"mipr embed {s} seconds"] = embed_s
        for path in ("", " shared"):
            out[f"mipr rerank {s}{path} seconds"] = COUNTS["mipr pairs"] / out[f"rerank {s} mipr{path} pairs/s"]
            out[f"mipr baseline {s}{path} seconds"] = embed_s + out[f"mipr rerank {s}{path} seconds"]
    query, passage = preflmr_query(), preflmr_passage()
    out["preflmr passages/s"] = passage.per_second()
    out["preflmr queries/s"] = query.per_second()
    out["preflmr passages/s fp32"] = passage.per_second(SUSTAINED_FP32_TFLOPS)
    out["preflmr queries/s fp32"] = query.per_second(SUSTAINED_FP32_TFLOPS)
    search = maxsim_seconds_per_query(COUNTS["m2kr corpus"])
    out["maxsim seconds a query"] = search["seconds"]
    out["maxsim m2kr seconds"] = search["seconds"] * COUNTS["m2kr queries"]
    out["preflmr m2kr baseline seconds"] = (
        COUNTS["m2kr corpus"] / out["preflmr passages/s"]
        + COUNTS["m2kr queries"] / out["preflmr queries/s"]
        + out["maxsim m2kr seconds"]
    )
    return out


def main() -> None:
    print(f"Assumptions: {SUSTAINED_TFLOPS:.0f} TFLOP/s bf16 sustained (one H200), {SUSTAINED_HBM_TBPS} TB/s.\n")
    print("| input | image -> patches -> LM tokens | vision TFLOP | language TFLOP | total | per s |")
    print("|---|---|---:|---:|---:|---:|")
    for size in ("2b", "8b"):
        for name, image, text in (
            ("MIPR product", IMAGES["mipr photo"], TEXT_TOKENS["mipr corpus"]),
            ("MIPR query", IMAGES["mipr photo"], TEXT_TOKENS["mipr query"]),
            ("M2KR passage + screenshot", IMAGES["m2kr screenshot"], TEXT_TOKENS["m2kr corpus"]),
        ):
            patches, tokens = qwen_image_tokens(size, image)
            cost = qwen_embed(size, image, text)
            print(
                f"| {size} embed, {name} | {image[0]}x{image[1]} -> {patches:,} -> {tokens:,} (+{text} text) "
                f"| {cost.vision:.2f} | {cost.language:.2f} | {cost.total:.2f} | {cost.per_second():.0f} |"
            )
    print(f"\nA reranked pair's work ({RERANK_CANDIDATES} candidates a query; images as above, text tokens estimated):")
    print("| pair | LM tokens, whole | LM tokens, shared | ratio | vision patches, whole | shared | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in RERANK_IMAGES:
        work = rerank_work(kind)
        whole, shared = work["whole"], work["shared"]
        print(
            f"| {kind} ({work['prefix tokens']:,} prefix + {work['suffix tokens']:,} suffix tokens) "
            f"| {whole['tokens']:,} | {shared['tokens']:,.1f} | {shared['tokens'] / whole['tokens']:.3f} "
            f"| {whole['patches']:,} | {shared['patches']:,.0f} | {shared['patches'] / whole['patches']:.3f} |"
        )
    out = estimates()
    print()
    for name, value in out.items():
        shown = f"{value / 60:.1f} min" if name.endswith("seconds") and value > 120 else f"{value:,.3g}"
        print(f"{name}: {shown}")
    q, p = preflmr_query(), preflmr_passage()
    print(f"PreFLMR query {q.total:.3f} TFLOP ({q.vision:.3f} vision), passage {p.total:.4f} TFLOP")
    print(f"MaxSim a query over {COUNTS['m2kr corpus']:,} passages: {maxsim_seconds_per_query(COUNTS['m2kr corpus'])}")


if __name__ == "__main__":
    main()
