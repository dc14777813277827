"""Images in every mode PIL reads (1, L, LA, P, PA, RGB, RGBA, CMYK, I;16, I, F, YCbCr, ...), with and without a
transparency index (PNG ``tRNS``, GIF), made the same way in any environment with numpy and PIL: the cases on
which every preset's image preparation is held to its authors' (``tests/retrieve/inputs/test_image_modes.py``,
``scripts/preflmr_reference.py pixels``). Each case is an image file's bytes where a format stores that mode
(the authors read files), else the image itself.
"""

import io

import numpy as np
from PIL import Image

WIDTH, HEIGHT = 96, 64  # CLIP upsamples and crops noise of this size (every pixel counts); a Qwen3-VL budget keeps
# it as it is (multiples of 32), so a transparent colour reaches that processor unblended by a resize


def _palette_image(rng, colours: int = 8) -> Image.Image:
    """A palette image of ``colours`` colours, each drawn often (index 3 is the transparent one below)."""
    image = Image.fromarray(rng.integers(0, colours, (HEIGHT, WIDTH)).astype(np.uint8), "P")
    image.putpalette([int(v) for v in rng.integers(0, 256, 3 * colours)])
    return image


def _saved(image: Image.Image, kind: str, **options) -> bytes:
    data = io.BytesIO()
    image.save(data, format=kind, **options)
    return data.getvalue()


def cases() -> dict:
    """{name: bytes of an image file, or a PIL image where no format stores that mode}."""
    rng = np.random.default_rng(47)
    rgb = Image.fromarray(rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8))
    palette = _palette_image(rng)
    few_colours = palette.convert("RGB")
    alpha = rgb.convert("RGBA")
    alpha.putalpha(Image.fromarray(rng.integers(0, 256, (HEIGHT, WIDTH), dtype=np.uint8)))
    grey = Image.fromarray((rng.integers(0, 8, (HEIGHT, WIDTH)) * 36).astype(np.uint8), "L")
    wide = rng.integers(0, 65536, (HEIGHT, WIDTH)).astype(np.uint16)
    return {
        "1 (PNG)": _saved(rgb.convert("1"), "PNG"),
        "L (PNG)": _saved(rgb.convert("L"), "PNG"),
        "L with tRNS (PNG)": _saved(grey, "PNG", transparency=108),
        "LA (PNG)": _saved(alpha.convert("LA"), "PNG"),
        "P (PNG)": _saved(palette, "PNG"),
        "P with tRNS (PNG)": _saved(palette, "PNG", transparency=3),
        "P with transparency (GIF)": _saved(palette, "GIF", transparency=3),
        "PA (TIFF)": _saved(palette.convert("PA"), "TIFF"),
        "RGB (PNG)": _saved(rgb, "PNG"),
        "RGB with tRNS (PNG)": _saved(few_colours, "PNG", transparency=few_colours.getpixel((0, 0))),
        "RGBA (PNG)": _saved(alpha, "PNG"),
        "CMYK (JPEG)": _saved(rgb.convert("CMYK"), "JPEG", quality=95),
        "I;16 (PNG)": _saved(Image.fromarray(wide), "PNG"),
        "I (TIFF)": _saved(Image.fromarray(rng.integers(-50, 400, (HEIGHT, WIDTH)).astype(np.int32)), "TIFF"),
        "F (TIFF)": _saved(Image.fromarray(rng.uniform(-20, 280, (HEIGHT, WIDTH)).astype(np.float32)), "TIFF"),
        "YCbCr": rgb.convert("YCbCr"),
        "HSV": rgb.convert("HSV"),
        "RGBX": rgb.convert("RGBX"),
        "I;16B": Image.frombytes("I;16B", (WIDTH, HEIGHT), wide.astype(">u2").tobytes()),
    }


def opened(case) -> Image.Image:
    """The case as the authors open it: ``Image.open`` of the file (its bytes), or the image itself."""
    if isinstance(case, bytes):
        image = Image.open(io.BytesIO(case))
        image.load()
        return image
    return case
