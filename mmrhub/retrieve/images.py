"""Images as Qwen3-VL's authors feed them to their models, under a pixel budget.

The authors' embedder and reranker pass every image through qwen-vl-utils' ``process_vision_info`` with 16-pixel
patches (qwen3_vl_embedding.py:335-338, qwen3_vl_reranker.py:171-176), then call the processor with
``do_resize=False`` (QE:358, QR:201): the resizing is qwen-vl-utils' alone. Its rules (qwen-vl-utils 0.0.14, the
version their pyproject.toml asks for at least, ``vision_process.py``): ``to_rgb`` (84-90) lays an RGBA image on
white, ``smart_resize`` (56-81) picks the size, ``fetch_image`` (93-141) resizes with PIL's default filter
(bicubic). transformers' own resize rounds a side under 16 pixels to 0 and so sizes thin images differently
(a 1000x10 banner: 40 patches wide instead of 62), and it drops the alpha channel rather than laying it on white.

Also here: how images are decoded (EXIF orientation applied or not, ``decoded``), every mode turned into RGB as the
authors' stacks turn it (``as_rgb``), and Chinese-CLIP's square resize, done before the conversion to RGB as its
authors' transform does it (``SquareImages``).
"""

import math
from io import BytesIO

from PIL import Image

from mmrhub.retrieve.presets import EXIF_APPLY

RESIZE_RULE = "qwen-vl-utils 0.0.14: on white, smart_resize, PIL bicubic"
MAX_RATIO = 200  # qwen-vl-utils refuses a longer side over 200 times the shorter (vision_process.py:24, 67-70)


def decoded(value, orientation: str = EXIF_APPLY):
    """An image as the builders store it (``{"path", "bytes"}``, decode=False) decoded as ``datasets`` decodes it,
    EXIF orientation applied or not (``orientation``); None stays None, a decoded image is returned as it is."""
    if value is None or isinstance(value, Image.Image):
        return value
    path, data = value["path"], value["bytes"]
    if data is not None:
        image = Image.open(BytesIO(data))
    elif path is None:
        raise ValueError(f"an image has neither path nor bytes: {value}")
    else:
        from datasets.utils.file_utils import is_local_path
        from datasets.utils.file_utils import xopen

        if is_local_path(path):
            image = Image.open(path)
        else:  # an archive member (M2KR's split zips), read as datasets reads it
            with xopen(path, "rb") as f:
                image = Image.open(BytesIO(f.read()))
    image.load()
    if orientation == EXIF_APPLY and image.getexif().get(Image.ExifTags.Base.Orientation) is not None:
        from PIL import ImageOps

        image = ImageOps.exif_transpose(image)
    return image


def present(row_id, image):
    """``image``, or an error naming the item when it has none."""
    if image is None:
        raise ValueError(f"item {row_id!r} has no image; every query and corpus item needs one.")
    return image


def as_rgb(image: Image.Image) -> Image.Image:
    """``image`` in RGB as every preset's authors read it: PIL's ``convert("RGB")`` of whatever mode it has (1, L,
    LA, P, PA, RGBA, CMYK, I;16, I, F, YCbCr, ...), then handed to an image processor of transformers 4.x, which
    takes an RGB image as it is (``convert_to_rgb``, image_transforms.py:805-806 in 4.49 and 794-795 in 4.57).
    PIL keeps a palette's or a PNG ``tRNS`` chunk's transparent colour in ``info["transparency"]`` through the
    conversion, and transformers 5's ``convert_to_rgb`` lays the pixels of that colour on white: so the key is
    dropped here, and the processor keeps the pixels PIL gave, as the authors' did."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    if "transparency" in rgb.info:
        rgb = rgb.copy() if rgb is image else rgb
        del rgb.info["transparency"]
    return rgb


def on_white(image: Image.Image) -> Image.Image:
    """RGB: an RGBA image laid on white, any other mode converted (qwen-vl-utils' ``to_rgb``, vision_process.py:
    84-90: ``convert("RGB")``, a transparent palette colour kept as its colour; ``as_rgb``)."""
    if image.mode == "RGBA":
        white = Image.new("RGB", image.size, (255, 255, 255))
        white.paste(image, mask=image.split()[3])
        return white
    return as_rgb(image)


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


class SquareImages:
    """Runs in DataLoader workers: Chinese-CLIP's transform before its tensor conversion (cn_clip/clip/utils.py:
    181-182): resized to ``side`` x ``side`` with ``resample`` in the image's own mode, then converted to RGB. An
    image with alpha is resized with its alpha (PIL premultiplies it) and then loses it; a palette image is resized
    by PIL with its nearest filter (PIL's rule for palettes) before its colours are looked up. The processor is then
    told not to resize."""

    def __init__(self, side: int, resample: str):
        self.side, self.resample = side, resample

    def __call__(self, row_id, image: Image.Image) -> Image.Image:
        """The item's image, square and RGB; an error naming the item when it has none."""
        image = present(row_id, image)
        if image.size != (self.side, self.side):
            image = image.resize((self.side, self.side), Image.Resampling[self.resample.upper()])
        return as_rgb(image)
