"""The JPEG marker check (mmrhub/export/jpeg_markers.py) vouches only for files libjpeg decodes: generated damage
of every kind (bytes changed, bits flipped, bytes deleted or inserted, markers inserted, segments repeated or
dropped, files cut), on the encoder's usual outputs, and every file it passes decodes, whole and at an eighth of
its size. The usual outputs are all passed, so the export skips their decoding."""

import io
import random

import numpy as np
import pytest
from PIL import Image
from PIL import ImageFile

import mmrhub.export.parquet as parquet
from mmrhub.export.jpeg_markers import decodes_without_error


def pixels(width: int, height: int, grey: bool = False, seed: int = 0) -> np.ndarray:
    """A gradient with a little noise: compresses as a photo does."""
    rng = np.random.default_rng(seed)
    ramp = np.add.outer(np.linspace(0, 127, height), np.linspace(0, 127, width))
    image = (ramp[:, :, None] + rng.normal(0, 6, (height, width, 3))).clip(0, 255).astype("uint8")
    return image[:, :, 0] if grey else image


def jpeg(image: np.ndarray, mode: str = "", **options) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image).convert(mode or None).save(buffer, "JPEG", **options)
    return buffer.getvalue()


USUAL = {
    "baseline 4:2:0": jpeg(pixels(64, 64)),
    "4:4:4": jpeg(pixels(40, 40), subsampling=0),
    "4:2:2": jpeg(pixels(48, 32), subsampling=1),
    "grey": jpeg(pixels(56, 56, grey=True)),
    "odd size": jpeg(pixels(37, 21)),
    "optimized tables": jpeg(pixels(64, 48), optimize=True, quality=30),
    "restart every 2 blocks": jpeg(pixels(48, 48), restart_marker_blocks=2),
    "restart every row": jpeg(pixels(33, 21), restart_marker_rows=1),
    "EXIF and ICC": jpeg(pixels(32, 32), exif=b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00", icc_profile=b"x" * 300),
    "comment": jpeg(pixels(32, 32), comment=b"made here"),
}


def decodes(content: bytes, reduced: bool) -> bool:
    try:
        with Image.open(io.BytesIO(content)) as image:
            if reduced:
                image.draft(image.mode, (1, 1))
            image.load()
        return True
    except Exception:
        return False


def segments(content: bytes) -> list:
    """(start, end) of each marker segment before the scan data."""
    found, position = [], 2
    while position + 4 <= len(content):
        end = position + 2 + int.from_bytes(content[position + 2 : position + 4], "big")
        found.append((position, end))
        if content[position + 1] == 0xDA:
            break
        position = end
    return found


def damage(content: bytes, rng: random.Random) -> bytes:
    """One to three damages of one kind, chosen at random."""
    changed = bytearray(content)
    kind = rng.randrange(8)
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not changed:
            break
        at = rng.randrange(len(changed))
        head = rng.randrange(min(len(changed), 700))
        if kind == 0:
            changed[at] = rng.randrange(256)
        elif kind == 1:
            changed[head] = rng.randrange(256)  # the headers and tables
        elif kind == 2:
            changed[head] ^= 1 << rng.randrange(8)
        elif kind == 3:
            del changed[at : at + rng.randrange(1, 40)]
        elif kind == 4:
            marker = rng.choice([0x00, 0xD0, 0xD1, 0xD7, 0xD8, 0xD9, 0xDA, 0xC0, 0xC2, 0xC4, 0xDB, 0xDD, 0xFF])
            changed[at:at] = bytes([0xFF, rng.choice([marker, rng.randrange(256)])])
        elif kind == 5:
            changed = changed[: rng.randrange(len(changed))]
        else:
            parts = segments(bytes(changed))
            if not parts:
                continue
            start, end = rng.choice(parts)
            if kind == 6:
                changed[end:end] = changed[start:end]  # a segment twice
            else:
                del changed[start:end]  # a segment missing
    return bytes(changed)


@pytest.mark.parametrize("name", USUAL)
def test_the_usual_encoder_outputs_are_passed(name):
    assert decodes_without_error(USUAL[name])


@pytest.mark.parametrize(
    "content",
    [jpeg(pixels(48, 48), progressive=True), jpeg(pixels(32, 32), "CMYK")],
    ids=["progressive", "CMYK"],
)
def test_files_outside_the_checked_kind_are_left_to_the_decoder(content):
    assert not decodes_without_error(content)
    assert decodes(content, reduced=False)  # not damaged: the decoder passes them, and check_image with it
    parquet.check_image(content)


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data")
def test_every_file_the_markers_pass_decodes():
    rng = random.Random(0)
    passed = refused = damaged_but_passed = 0
    for original in USUAL.values():
        for _ in range(1200):
            content = damage(original, rng)
            if not decodes(content, reduced=False):
                refused += 1
            if decodes_without_error(content):
                passed += 1
                assert decodes(content, reduced=False) and decodes(content, reduced=True), content.hex()
                damaged_but_passed += content != original
    assert refused > 3000 and passed > 3000  # both kinds are there
    assert damaged_but_passed > 2000  # damage in the scan data only: the decoder warns, and decodes


def test_a_file_cut_anywhere_after_its_scan_begins_is_never_passed():
    """Not even one cut just before its EOI marker, which Pillow refuses too."""
    content = USUAL["restart every 2 blocks"]
    scan = segments(content)[-1][1]
    assert not any(decodes_without_error(content[:cut]) for cut in range(scan, len(content)))
    assert not decodes(content[:-2], reduced=False)


def test_restart_markers_must_come_in_order_and_number():
    content = USUAL["restart every 2 blocks"]
    first = content.index(b"\xff\xd0")
    assert not decodes_without_error(content.replace(b"\xff\xd0", b"\xff\xd1", 1))  # D1 twice
    assert not decodes_without_error(content[:first] + content[first + 2 :])  # one missing
    assert decodes_without_error(content)


def test_check_image_skips_the_decoding_of_a_passed_file_and_decodes_the_others(monkeypatch):
    loads = []
    real_load = ImageFile.ImageFile.load
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda self: loads.append(self.format) or real_load(self))
    parquet.check_image(USUAL["baseline 4:2:0"])
    assert loads == []
    parquet.check_image(jpeg(pixels(48, 48), progressive=True))
    assert loads == ["JPEG"]
    with pytest.raises(parquet.ImageError, match="cannot be decoded as an image"):
        parquet.check_image(USUAL["baseline 4:2:0"][:300])  # cut in the tables: not passed, and refused
