"""Images under a Qwen3-VL pixel budget, prepared as the authors' qwen-vl-utils prepares them (checked against
qwen-vl-utils itself in test_qwen3vl.py, where it is installed)."""

import pytest
from PIL import Image

from mmrhub.retrieve.images import BudgetImages
from mmrhub.retrieve.images import budget_size
from mmrhub.retrieve.images import on_white

LOW, HIGH = 4 * 32 * 32, 1800 * 32 * 32  # the Qwen3-VL presets' budget


@pytest.mark.parametrize(
    ("height", "width", "expected"),
    [
        (480, 640, (480, 640)),  # multiples of 32 inside the budget: unchanged
        (499, 701, (512, 704)),  # each side to its nearest multiple of 32
        (48, 48, (64, 64)),  # the sample's products: grown to 4,096 pixels
        (10, 1000, (32, 992)),  # a banner: its short side is 32, never 0
        (1280, 4000, (768, 2400)),  # a screenshot: shrunk under 1,843,200 pixels
    ],
)
def test_budget_sizes(height, width, expected):
    assert budget_size(height, width, LOW, HIGH) == expected
    new_height, new_width = expected
    assert new_height % 32 == new_width % 32 == 0 and LOW <= new_height * new_width <= HIGH


def test_transparency_is_laid_on_white():
    image = Image.new("RGBA", (40, 40), (255, 0, 0, 0))
    image.paste((0, 0, 255, 255), (0, 0, 20, 40))
    flat = on_white(image)
    assert flat.mode == "RGB" and flat.getpixel((30, 5)) == (255, 255, 255) and flat.getpixel((5, 5)) == (0, 0, 255)


def test_an_image_is_resized_once_to_the_budget():
    prepare = BudgetImages(LOW, HIGH)
    assert prepare("p1", Image.new("L", (48, 48))).size == (64, 64)
    same = Image.new("RGB", (64, 96))
    assert prepare("p2", same) is same


def test_errors_name_the_item():
    prepare = BudgetImages(LOW, HIGH)
    with pytest.raises(ValueError, match=r"^item 'p9': a 2010x10 image: the longer side may be at most 200 times"):
        prepare("p9", Image.new("RGB", (2010, 10)))
    with pytest.raises(ValueError, match=r"^item 'p8' has no image; every query and corpus item needs one\.$"):
        prepare("p8", None)
