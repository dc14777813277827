"""The Qwen3-VL-Embedding path (image + text as one input) with a tiny random Qwen3-VL.

transformers builds the Qwen3-VL processor only with torchvision installed, so this skips without it.
"""

import json

import pytest

pytest.importorskip("torchvision")
pytest.importorskip("sentence_transformers")

from _retrieve_helpers import build_tiny_qwen3_vl_embedding  # noqa: E402
from test_retrieve import IMAGE_ONLY_QUERY  # noqa: E402
from test_retrieve import SELF_QUERY  # noqa: E402
from test_retrieve import mipr_dir  # noqa: E402,F401  (fixture)
from test_retrieve import retrieve  # noqa: E402
from test_retrieve import top  # noqa: E402

from mmrhub.benchmarks import MIPR  # noqa: E402
from mmrhub.retrieve.presets import QWEN3_VL_EMBEDDING  # noqa: E402
from mmrhub.scoring.score import read_valid_run  # noqa: E402


def test_fused_image_text_model(tmp_path, mipr_dir, capsys):  # noqa: F811
    model = build_tiny_qwen3_vl_embedding(tmp_path / "qwen")
    path, run, stats = retrieve(
        tmp_path,
        "mipr",
        "--data-dir",
        mipr_dir["dir"],
        "--backend",
        "sentence-transformers",
        "--model",
        model,
        "--top-k",
        10,
        "--batch-size",
        8,
        "--cache-dir",
        tmp_path / "cache",
    )
    read_valid_run(MIPR.read_truth(mipr_dir["dir"]), path)
    manifest = json.loads(next((tmp_path / "cache").glob("*/manifest.json")).read_text())
    assert manifest["encoder"]["fused"] is True and manifest["num_items"] == mipr_dir["num_corpus"]
    assert top(run, SELF_QUERY)[0]["did"] == mipr_dir["self_item"]
    assert len(top(run, IMAGE_ONLY_QUERY)) == 10
    assert stats["phases"]["embed queries"]["items"] == mipr_dir["num_queries"]


def conversations(encoder) -> list:
    """The conversations the processor renders, recorded as the encoder hands them over."""
    seen = []
    processor = encoder.module.processor
    render = processor.apply_chat_template

    def recording(messages, *args, **kwargs):
        seen.extend(messages)
        return render(messages, *args, **kwargs)

    processor.apply_chat_template = recording
    return seen


def tiny_encoder(tmp_path, **overrides):
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.options import ModelSettings

    model = build_tiny_qwen3_vl_embedding(tmp_path / "qwen")
    settings = ModelSettings(preset="qwen3-vl-embedding", **overrides).resolve(str(model), "embedding")
    return build_encoder("sentence-transformers", str(model), settings)


def test_embedding_conversation_is_the_authors(tmp_path):
    from PIL import Image

    from mmrhub.retrieve.encoders import CORPUS
    from mmrhub.retrieve.encoders import QUERIES

    encoder = tiny_encoder(tmp_path, document_instruction="Represent the product")
    seen = conversations(encoder)
    image = Image.new("RGB", (64, 48), "red")
    encoder.encode({"ids": ["q"], "texts": ["除垢剂"], "images": [image]}, QUERIES)
    encoder.encode({"ids": ["d"], "texts": [None], "images": [image]}, CORPUS)
    query, document = seen
    assert query[0] == {"role": "system", "content": [{"type": "text", "text": QWEN3_VL_EMBEDDING.query_instruction}]}
    assert [item["type"] for item in query[1]["content"]] == ["image", "text"]
    assert query[1]["content"][1]["text"] == "除垢剂"
    # the authors' rule: an instruction not ending in punctuation gets a '.'
    assert document[0]["content"][0]["text"] == "Represent the product."
    assert [item["type"] for item in document[1]["content"]] == ["image"]


@pytest.mark.parametrize(
    ("size", "max_pixels", "grid"),
    [((640, 480), None, [1, 30, 40]), ((640, 480), 16 * 32 * 32, [1, 6, 8]), ((20, 20), None, [1, 4, 4])],
)
def test_pixel_budget_sets_the_image_grid(tmp_path, size, max_pixels, grid):
    from PIL import Image

    encoder = tiny_encoder(tmp_path, max_pixels=max_pixels)
    features = encoder.module.preprocess([{"image": Image.new("RGB", size), "text": "x"}])
    # (t, h, w) patches of 16 pixels: 4,096 <= pixels <= max_pixels (1,843,200 by default), rounded to 32
    assert features["image_grid_thw"].tolist() == [grid]


def test_max_length_cuts_text_never_image_tokens(tmp_path, mipr_dir):  # noqa: F811
    from PIL import Image

    from mmrhub.retrieve.encoders import QUERIES

    encoder = tiny_encoder(tmp_path, max_length=120)
    image = Image.new("RGB", (64, 64))
    long_text = "除垢剂" * 50
    fitted = encoder.fit({"image": image, "text": long_text}, encoder.prompts[QUERIES])
    features = encoder.module.preprocess([fitted], prompt=encoder.prompts[QUERIES])
    assert features["input_ids"].shape[1] <= 120 and long_text.startswith(fitted["text"])
    assert encoder.encode({"ids": ["q"], "texts": [long_text], "images": [image]}, QUERIES).shape[0] == 1
    with pytest.raises(ValueError, match="--max-length 5: an input takes"):
        tiny_encoder(tmp_path / "short", max_length=5).fit({"image": image, "text": "x"}, None)
