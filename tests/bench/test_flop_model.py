"""bench/flop_model.py, the one source of the GPU estimates the docs quote: its counts against the real models'
parameters and the real processor's resize, and the docs against its figures."""

import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _paths import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import flop_model  # noqa: E402
from tiny_models import QWEN3_VL_SIZES  # noqa: E402


def test_images_are_resized_as_the_qwen2_vl_processor_resizes_them():
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize

    budget = dict(min_pixels=4 * 32 * 32, max_pixels=1800 * 32 * 32)
    for width, height in [(800, 800), (1024, 2000), (1024, 1400), (640, 480), (3000, 200), (50, 50), (4000, 3000)]:
        expected_h, expected_w = smart_resize(height, width, factor=32, **budget)
        assert flop_model.smart_resize(width, height, **budget) == (expected_w, expected_h)
    assert flop_model.qwen_image_tokens("2b", (1024, 2000)) == (7080, 1770)  # capped at 1800 x 32 x 32 pixels


@pytest.mark.parametrize("size", ["2b", "8b"])
def test_matrix_flops_are_twice_the_real_layouts_weights(size):
    """Per token, the language model's and the vision tower's matrix products cost 2 FLOPs per weight of their
    layers (a Qwen3VLModel of the real configuration on the meta device), plus attention; each merger's per
    merged token."""
    from transformers import Qwen3VLConfig
    from transformers import Qwen3VLModel

    shape = QWEN3_VL_SIZES[size]
    config = Qwen3VLConfig(
        text_config=dict(vocab_size=shape["vocab_size"], **shape["text"]),
        vision_config=dict(patch_size=16, spatial_merge_size=2, temporal_patch_size=2, **shape["vision"]),
    )
    with torch.device("meta"):
        model = Qwen3VLModel(config)

    def matrices(module):
        return sum(p.numel() for p in module.parameters() if p.ndim >= 2)

    text = shape["text"]
    attention_one_token = text["num_hidden_layers"] * 4 * 0.5 * text["num_attention_heads"] * text["head_dim"]
    language = flop_model.qwen_language_tflop(size, 1) * 1e12 - attention_one_token
    assert language == pytest.approx(2 * matrices(model.language_model.layers), rel=1e-9)

    vision = shape["vision"]
    patch_layers = vision["depth"] * flop_model.transformer_layer(
        1, vision["hidden_size"], vision["intermediate_size"], 0
    )
    assert patch_layers == 2 * matrices(model.visual.blocks)
    assert 1536 * vision["hidden_size"] == matrices(model.visual.patch_embed)
    patches, tokens = flop_model.qwen_image_tokens(size, (800, 800))
    mergers = 2 * tokens * (matrices(model.visual.merger) + matrices(model.visual.deepstack_merger_list))
    attention = vision["depth"] * patches * 4 * patches * vision["hidden_size"]
    expected = 2 * 1536 * vision["hidden_size"] * patches + patches * patch_layers + attention + mergers
    assert flop_model.qwen_vision_tflop(size, (800, 800)) * 1e12 == pytest.approx(expected, rel=1e-12)


def test_the_docs_quote_the_models_figures():
    """docs/retrieve.md quotes the FLOP model's rates and times, never another count."""
    out = flop_model.estimates()
    page = " ".join((ROOT / "docs" / "retrieve.md").read_text(encoding="utf-8").split())
    for figure in (
        f"{out['embed 2b mipr items/s']:.0f} MIPR items/s",
        f"{out['embed 2b m2kr items/s']:.0f} M2KR items/s",
        f"{out['embed 8b mipr items/s']:.0f} for the 8B",
        f"{out['rerank 2b mipr pairs/s']:.0f} and {out['rerank 8b mipr pairs/s']:.0f} pairs/s",
        f"{out['rerank 2b mipr shared pairs/s']:.0f} and {out['rerank 8b mipr shared pairs/s']:.0f} pairs/s with the "
        "shared prefix",
        f"go from {out['rerank 2b mipr pairs/s']:.0f} to {out['rerank 2b mipr shared pairs/s']:.0f} MIPR pairs/s",
        f"{out['preflmr passages/s']:,.0f} passages/s",
        f"{out['preflmr queries/s']:.0f} queries/s",
        # the baseline's time is quoted from the H200's measured rates, beside the model's estimate
        f"estimated {out['mipr baseline 8b seconds'] / 3600:.1f} h and {out['mipr baseline 2b seconds'] / 3600:.1f} h",
    ):
        assert figure in page, figure


@pytest.mark.parametrize("size", ["2b", "8b"])
@pytest.mark.parametrize("kind", ["mipr", "m2kr"])
def test_the_shared_prefix_costs_the_whole_pair_for_one_candidate(size, kind):
    """Prefix once, then the suffix attending to it, is the whole sequence's work: with one candidate a query the
    shared path costs what the whole pair does, to the FLOP; with fifty, its vision tower runs the query image once
    for all of them."""
    query, document = (flop_model.IMAGES[name] for name in flop_model.RERANK_IMAGES[kind])
    texts = flop_model.rerank_texts(kind)
    whole = flop_model.qwen_rerank(size, query, document, sum(texts))
    one = flop_model.qwen_rerank_shared(size, query, document, texts, candidates=1)
    assert (one.vision, one.language) == pytest.approx((whole.vision, whole.language), rel=1e-12)
    fifty = flop_model.qwen_rerank_shared(size, query, document, texts, candidates=50)
    query_vision = flop_model.qwen_vision_tflop(size, query)
    assert fifty.vision == pytest.approx(whole.vision - query_vision * 49 / 50, rel=1e-12)


def test_the_shared_prefix_halves_a_mipr_pairs_work():
    """Issue 47's target: language-model tokens and vision patches a MIPR pair at most 0.55x the whole pair's
    (counted with 800x800 photos, 50 candidates a query); an M2KR pair, whose screenshot and passage outweigh the
    query, saves less."""
    mipr, m2kr = flop_model.rerank_work("mipr"), flop_model.rerank_work("m2kr")
    assert mipr["whole"] == {"tokens": 625 + 625 + 109, "patches": 5000}
    assert mipr["shared"]["patches"] == 2500 / 50 + 2500
    assert mipr["shared"]["tokens"] / mipr["whole"]["tokens"] <= 0.55
    assert mipr["shared"]["patches"] / mipr["whole"]["patches"] <= 0.55
    assert 0.8 < m2kr["shared"]["tokens"] / m2kr["whole"]["tokens"] < 0.9
