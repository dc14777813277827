"""The smaller choices, each stated (README, presets.py), recorded (the run's metadata) and held here: EXIF
orientation, Chinese-CLIP's resize before the conversion to RGB, float32 similarities and reranker scores, and a
warning when a tokenizer turns a run's texts into unknown tokens. CPU, tiny random models."""

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import build_tiny_chinese_clip  # noqa: E402

from mmrhub.retrieve.images import SquareImages  # noqa: E402
from mmrhub.retrieve.images import decoded  # noqa: E402
from mmrhub.retrieve.presets import resolve  # noqa: E402


def tagged_jpeg(path, orientation: int = 6):
    """A 60x40 JPEG whose EXIF says to turn it (6: 90 degrees clockwise), its left half red."""
    image = Image.new("RGB", (60, 40), "blue")
    image.paste((255, 0, 0), (0, 0, 30, 40))
    exif = Image.Exif()
    exif[Image.ExifTags.Base.Orientation] = orientation
    image.save(path, exif=exif, quality=95)
    return path


def test_exif_orientation_is_applied_or_ignored_as_asked(tmp_path):
    from datasets import Image as ImageFeature

    path = tagged_jpeg(tmp_path / "tagged.jpg")
    value = {"path": str(path), "bytes": None}
    applied, ignored = decoded(value, "apply"), decoded(value, "ignore")
    as_datasets = ImageFeature().decode_example(value)
    assert applied.size == as_datasets.size == (40, 60)  # turned upright, as datasets turns it
    assert np.array_equal(np.asarray(applied), np.asarray(as_datasets))
    assert ignored.size == (60, 40) and np.array_equal(np.asarray(ignored), np.asarray(Image.open(path)))
    as_bytes = decoded({"path": None, "bytes": path.read_bytes()}, "ignore")
    assert np.array_equal(np.asarray(as_bytes), np.asarray(ignored))


@pytest.mark.parametrize(
    ("model", "preset", "orientation"),
    [
        ("Qwen/Qwen3-VL-Embedding-2B", None, "ignore"),
        ("Qwen/Qwen3-VL-Reranker-2B", None, "ignore"),
        ("OFA-Sys/chinese-clip-vit-large-patch14", None, "ignore"),
        ("/models/mine", None, None),  # no preset: datasets' own decoding, which applies it
    ],
)
def test_each_preset_says_which_orientation_and_why(model, preset, orientation):
    role = "reranker" if "Reranker" in model else "embedding"
    settings = resolve(model, preset, role)
    assert settings.exif_orientation == orientation
    if orientation:
        assert "no EXIF transpose" in settings.settings()["sources"]["exif_orientation"]
    assert resolve(model, preset, role, exif_orientation="apply").exif_orientation == "apply"


def palette_and_alpha():
    rng = np.random.default_rng(0)
    noise = Image.fromarray(rng.integers(0, 256, (50, 70, 3), dtype=np.uint8))
    alpha = noise.convert("RGBA")
    alpha.putalpha(Image.fromarray(rng.integers(0, 256, (50, 70), dtype=np.uint8)))
    return {"palette": noise.convert("P"), "alpha": alpha}


@pytest.mark.parametrize("kind", ["palette", "alpha"])
def test_chinese_clip_resizes_before_converting_to_rgb_as_its_authors(kind):
    """cn_clip's transform (utils.py:181-182): Resize((224, 224), BICUBIC) on the image as it is, then RGB. On an
    image with alpha or a palette the other order gives other pixels."""
    image = palette_and_alpha()[kind]
    ours = SquareImages(32, "bicubic")("x", image)
    theirs = image.resize((32, 32), Image.Resampling.BICUBIC).convert("RGB")
    other_order = image.convert("RGB").resize((32, 32), Image.Resampling.BICUBIC)
    assert ours.mode == "RGB" and np.array_equal(np.asarray(ours), np.asarray(theirs))
    assert not np.array_equal(np.asarray(ours), np.asarray(other_order))


def test_chinese_clip_pixels_are_its_authors_transform(tmp_path):
    """The preset's pixel values: cn_clip's Resize, RGB, ToTensor, Normalize (in numpy, torchvision being absent
    here); and for an RGB image the same as the processor's own square resize (what the preset did before)."""
    import torch

    from mmrhub.retrieve.data_loading import Row
    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder

    model = str(build_tiny_chinese_clip(tmp_path / "chinese-clip", ["除垢剂"]))
    encoder = build_encoder("transformers", model, resolve(model, None, "embedding"))
    assert (
        encoder.settings.name == "chinese-clip" and encoder.identity["image"]["prepare"]["order"] == "resize, then RGB"
    )
    mean, std = np.array(encoder.image_processor.image_mean), np.array(encoder.image_processor.image_std)
    images = {**palette_and_alpha(), "rgb": palette_and_alpha()["alpha"].convert("RGB")}
    batch = encoder.collate(QUERIES)([Row(name, None, image) for name, image in images.items()])
    for pixels, image in zip(batch["pixel_values"], images.values()):
        resized = np.asarray(image.resize((32, 32), Image.Resampling.BICUBIC).convert("RGB"), dtype=np.float32)
        theirs = ((resized / 255 - mean) / std).transpose(2, 0, 1)
        np.testing.assert_allclose(pixels.numpy(), theirs, atol=1e-5)
    before = encoder.image_processor(
        images=[images["rgb"]],
        size={"height": 32, "width": 32},
        do_center_crop=False,
        resample=Image.Resampling.BICUBIC,
        return_tensors="pt",
    )["pixel_values"]
    assert torch.equal(batch["pixel_values"][2:], before)


def test_similarities_and_reranker_scores_are_float32_with_a_bfloat16_model(tmp_path):
    """Vectors leave the encoder in float32 (similarities are float32 dot products) and the reranker's sigmoid is
    taken of float32 logits, where the authors' code stays in bfloat16 (README: at near-ties the rankings can
    differ from a bfloat16 run; ours are the exact ones)."""
    import torch
    from tiny_models import build_tiny_llava_reranker

    from mmrhub.retrieve.data_loading import Row
    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    model = str(build_tiny_chinese_clip(tmp_path / "chinese-clip", ["除垢剂"]))
    encoder = build_encoder("transformers", model, resolve(model, None, "embedding"), dtype=torch.bfloat16)
    image = Image.new("RGB", (40, 40), "red")
    vectors = encoder.encode(encoder.collate(QUERIES)([Row("q", "除垢剂", image), Row("r", None, image)]), QUERIES)
    assert encoder.model.dtype == torch.bfloat16 and vectors.dtype == torch.float32
    assert encoder.identity["similarity"].startswith("float32")

    folder = str(build_tiny_llava_reranker(tmp_path / "reranker"))
    reranker = Reranker(folder, ModelSettings().resolve(folder, "reranker"), dtype=torch.bfloat16)
    features = reranker.collate()([(Row("q", "除垢剂", image), Row("d", "水壶", image))] * 2)
    with torch.inference_mode():
        logits = reranker.model(dict(features))["scores"]
    assert logits.dtype == torch.bfloat16
    scores = reranker.score(features)
    assert scores.dtype == torch.float32 and torch.equal(scores, torch.sigmoid(logits.float()).reshape(-1))
    assert reranker.identity["score"].startswith("float32")


def test_a_tokenizer_that_turns_words_into_unknowns_is_named(tmp_path):
    """A Chinese-CLIP tokenizer that keeps case turns "LED", "65W", "5G" into [UNK]; one that lower-cases does not."""
    from transformers import AutoTokenizer

    from mmrhub.retrieve.token_budget import unknown_tokens_warning

    texts = ["LED台灯65W快充", "5G手机 OLED屏", "除垢剂 500g", "USB-C充电器"] * 10
    keeps_case = AutoTokenizer.from_pretrained(build_tiny_chinese_clip(tmp_path / "a", texts, lower_case=False))
    lower_cases = AutoTokenizer.from_pretrained(build_tiny_chinese_clip(tmp_path / "b", texts))
    assert unknown_tokens_warning(lower_cases, texts, "the corpus' texts", "b") is None
    warning = unknown_tokens_warning(keeps_case, texts, "the corpus' texts", "a")
    assert (
        warning.startswith("warning: a's tokenizer turns ")
        and "of the tokens of the corpus' texts into [UNK]" in warning
    )
    assert "'LED'" in warning and "do_lower_case" in warning


def test_retrieve_warns_before_embedding_when_texts_become_unknowns(tmp_path, capsys):
    from _retrieve_helpers import retrieve

    model = build_tiny_chinese_clip(tmp_path / "clip", ["除垢剂"], lower_case=False)  # knows none of the sample
    retrieve(tmp_path, "mipr", "--backend", "transformers", "--model", model, "--top-k", 3, "--no-eval", "--no-cache")
    err = capsys.readouterr().err
    assert "tokenizer turns" in err and "of the tokens of the corpus' texts into [UNK]" in err
