"""Images as Qwen3-VL's authors feed them to their models, under a pixel budget.

The authors' embedder and reranker pass every image through qwen-vl-utils' ``process_vision_info`` with 16-pixel
patches (qwen3_vl_embedding.py:335-338, qwen3_vl_reranker.py:171-176), then call the processor with
``do_resize=False`` (QE:358, QR:201): the resizing is qwen-vl-utils' alone. Its rules (qwen-vl-utils 0.0.14, the
version their pyproject.toml asks for at least, ``vision_process.py``): ``to_rgb`` (84-90) lays an RGBA image on
white, ``smart_resize`` (56-81) picks the size, ``fetch_image`` (93-141) resizes with PIL's default filter
(bicubic). transformers' own resize rounds a side under 16 pixels to 0 and so sizes thin images differently
(a 1000x10 banner: 40 patches wide instead of 62), and it drops the alpha channel rather than laying it on white.
"""

import math

from PIL import Image

RESIZE_RULE = "qwen-vl-utils 0.0.14: on white, smart_resize, PIL bicubic"
MAX_RATIO = 200  # qwen-vl-utils refuses a longer side over 200 times the shorter (vision_process.py:24, 67-70)


def present(row_id, image):
    """``image``, or an error naming the item when it has none."""
    if image is None:
        raise ValueError(f"item {row_id!r} has no image; every query and corpus item needs one.")
    return image


def on_white(image: Image.Image) -> Image.Image:
    """RGB: an RGBA image laid on white, any other mode converted (qwen-vl-utils' ``to_rgb``)."""
    if image.mode == "RGBA":
        white = Image.new("RGB", image.size, (255, 255, 255))
        white.paste(image, mask=image.split()[3])
        return white
    return image if image.mode == "RGB" else image.convert("RGB")


def budget_size(height: int, width: int, min_pixels: int, max_pixels: int, factor: int = 32) -> tuple:
    """(height, width) in multiples of ``factor`` (the 16-pixel patch times the 2x2 merge), the aspect ratio kept
    as closely as may be, with min_pixels <= height x width <= max_pixels (qwen-vl-utils' ``smart_resize``)."""
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"a {width}x{height} image: the longer side may be at most {MAX_RATIO} times the shorter")
    new_height = max(factor, round(height / factor) * factor)
    new_width = max(factor, round(width / factor) * factor)
    if new_height * new_width > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        new_height = math.floor(height / beta / factor) * factor
        new_width = math.floor(width / beta / factor) * factor
    elif new_height * new_width < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        new_height = math.ceil(height * beta / factor) * factor
        new_width = math.ceil(width * beta / factor) * factor
    return new_height, new_width


class BudgetImages:
    """Runs in DataLoader workers: an item's image on white and resized to the pixel budget, as above."""

    def __init__(self, min_pixels: int, max_pixels: int):
        self.min_pixels, self.max_pixels = min_pixels, max_pixels

    def __call__(self, row_id, image: Image.Image) -> Image.Image:
        """The item's image, ready for a processor told not to resize; errors name the item."""
        image = on_white(present(row_id, image))
        try:
            height, width = budget_size(image.height, image.width, self.min_pixels, self.max_pixels)
        except ValueError as err:
            raise ValueError(f"item {row_id!r}: {err}.") from None
        return image if (width, height) == image.size else image.resize((width, height), Image.Resampling.BICUBIC)
