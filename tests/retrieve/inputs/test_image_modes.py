"""Every image mode PIL reads (``scripts/image_modes.py``: 1, L, LA, P, PA, RGB, RGBA, CMYK, I;16, I, F, YCbCr, ...,
palettes and greys with a transparency index, as PNG ``tRNS`` and GIF) reaches each preset's processor as the
pixels its authors' stack gives it. PIL's ``convert("RGB")`` keeps a transparent colour in ``info``, and
transformers 5 lays that colour on white where the authors' transformers 4 kept it (``images.as_rgb``):

- PreFLMR: the query pixel values equal, bit for bit, those of the authors' example under transformers 4.49
  (``Image.open(path).convert("RGB")``, example_use_preflmr.py:291; ``scripts/preflmr_reference.py pixels`` made
  the fixture in a venv of its own);
- Chinese-CLIP: its authors' transform (cn_clip/clip/utils.py:181-182, the image read with ``Image.open``,
  cn_clip/eval/data.py:91): resized in its own mode, then ``convert("RGB")``, ToTensor, Normalize (in numpy here);
- Qwen3-VL: qwen-vl-utils' own preparation, in the Qwen3-VL venv (``test_qwen3vl.py``).
"""

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _paths import ROOT  # noqa: E402
from image_modes import cases  # noqa: E402
from image_modes import opened  # noqa: E402
from PIL import Image  # noqa: E402

from mmrhub.retrieve.data_loading import Row  # noqa: E402
from mmrhub.retrieve.images import as_rgb  # noqa: E402
from mmrhub.retrieve.images import decoded  # noqa: E402
from mmrhub.retrieve.presets import EXIF_IGNORE  # noqa: E402

FIXTURE = ROOT / "tests" / "retrieve" / "data" / "image_modes_reference.json"
TRANSPARENT = ("L with tRNS (PNG)", "P with tRNS (PNG)", "P with transparency (GIF)", "RGB with tRNS (PNG)")


def as_the_pipeline_reads(case):
    """The case as a query or corpus row holds it: a file's bytes decoded as the pipeline decodes them."""
    if isinstance(case, bytes):
        return decoded({"path": None, "bytes": case}, EXIF_IGNORE)
    return case


def digest(values) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(values, dtype=np.float32)).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def reference():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def preflmr(tmp_path_factory):
    """PreFLMR's encoder (the tiny checkpoint) whose collate prepares images with ViT-bigG/14's image processor
    settings (CLIP's defaults). The encoder refuses a processor whose images its 28-pixel tower cannot take, so it is
    loaded with its own and handed ViT-G's after: only the pixels are compared here, never run through the model."""
    from tiny_models import PREFLMR_PROCESSOR
    from tiny_models import build_preflmr
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder
    from mmrhub.retrieve.late_interaction.preflmr.encoder import load_image_processor

    folder = tmp_path_factory.mktemp("preflmr")
    checkpoint = build_preflmr(folder / "tiny", texts=["who designed this"])
    CLIPImageProcessorPil().save_pretrained(folder / "vit-g-processor")
    encoder = build_preflmr_encoder(str(checkpoint), image_processor=str(checkpoint / PREFLMR_PROCESSOR))
    encoder.image_processor = load_image_processor(str(folder / "vit-g-processor"))
    return encoder


def test_the_cases_cover_every_mode_and_the_reference_covers_every_case(reference):
    made = {name: opened(case).mode for name, case in cases().items()}
    assert set(made.values()) >= {"1", "L", "LA", "P", "PA", "RGB", "RGBA", "CMYK", "I;16", "I", "F", "YCbCr"}
    assert {name: case["mode"] for name, case in reference["cases"].items()} == made
    for name in TRANSPARENT:
        assert opened(cases()[name]).info.get("transparency") is not None, name


def test_preflmr_query_pixels_are_the_authors_in_every_mode(preflmr, reference):
    collate = preflmr.collate("queries")
    named = list(cases().items())
    rows = [Row(name, "who designed this", as_the_pipeline_reads(case), "Identify:") for name, case in named]
    pixels = collate(rows)["pixel_values"].numpy()
    for (name, _), values in zip(named, pixels):
        theirs = reference["cases"][name]
        assert list(values.shape) == theirs["shape"], name
        assert digest(values) == theirs["sha256"], (name, float(values.sum(dtype=np.float64)), theirs["sum"])


def test_a_transparent_colour_left_in_the_image_would_be_laid_on_white(preflmr, reference):
    """What the cases catch: transformers 5 given PIL's conversion as it is (transparency kept in ``info``) makes
    other pixels than the authors' for each transparent case, and the same for the others."""
    for name, case in cases().items():
        image = as_the_pipeline_reads(case).convert("RGB")
        values = preflmr.image_processor(images=[image], return_tensors="np")["pixel_values"][0]
        assert (digest(values) == reference["cases"][name]["sha256"]) is (name not in TRANSPARENT), name


def test_as_rgb_keeps_pil_pixels_and_drops_only_the_transparency():
    for name, case in cases().items():
        image = opened(case)
        rgb = as_rgb(image)
        assert rgb.mode == "RGB" and "transparency" not in rgb.info, name
        assert np.array_equal(np.asarray(rgb), np.asarray(image.convert("RGB"))), name
    image = opened(cases()["RGB with tRNS (PNG)"])
    as_rgb(image)
    assert image.info.get("transparency") is not None  # the caller's image is left as it was
    plain = Image.new("RGB", (4, 4))
    assert as_rgb(plain) is plain


def test_chinese_clip_pixels_are_its_authors_transform_in_every_mode(tmp_path):
    from tiny_models import build_tiny_chinese_clip

    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.presets import resolve

    model = str(build_tiny_chinese_clip(tmp_path / "chinese-clip", ["除垢剂"]))
    encoder = build_encoder("transformers", model, resolve(model, None, "embedding"))
    assert encoder.settings.name == "chinese-clip" and encoder.orientation == EXIF_IGNORE
    side = encoder.identity["image"]["prepare"]["side"]
    mean, std = np.array(encoder.image_processor.image_mean), np.array(encoder.image_processor.image_std)
    named = list(cases().items())
    batch = encoder.collate(QUERIES)([Row(name, None, as_the_pipeline_reads(case)) for name, case in named])
    for (name, case), pixels in zip(named, batch["pixel_values"]):
        resized = opened(case).resize((side, side), Image.Resampling.BICUBIC).convert("RGB")
        theirs = ((np.asarray(resized, dtype=np.float32) / 255 - mean) / std).transpose(2, 0, 1)
        np.testing.assert_allclose(pixels.numpy(), theirs, atol=1e-5, err_msg=name)
