"""Whether libjpeg decodes a JPEG without error, known from its markers alone, without decoding it.

For a sequential Huffman-coded JPEG (SOF0 or SOF1) with one scan, libjpeg-turbo's only errors come from the
markers and from data that ends before the image does (line numbers: libjpeg-turbo 3.2.0, the version Pillow's
wheels carry, ``src/`` at commit 8a99315b):

- the frame: ``jdinput.c:53-87`` (size, precision, component count, sampling), ``jdmarker.c:251-280``;
- the tables: ``jdmarker.c:475-504`` (DHT: lengths, indexes), ``531-562`` (DQT), ``579`` (DRI), and
  ``jdhuff.c:160-258`` (each table a scan names defined, a complete code, DC symbols up to 15);
- the scan header: ``jdmarker.c:317-361`` (length, component ids), ``jdinput.c:229`` (blocks an MCU),
  ``277`` (a quantization table defined); a second scan in a one-scan file, ``jdinput.c:352``.

Damaged entropy-coded bytes only raise warnings (``jdhuff.c:368`` a marker hit early, the rest filled with zeros;
``466`` a bad code): the decoder never reads past a marker. Pillow discards warnings (``src/libImaging/
JpegDecode.c:124-125,147``: ``output_message`` does nothing; only ``error_exit`` fails the load). So a file
whose markers are all well formed, whose scan data holds only stuffed ``FF 00`` bytes and the restart markers its
interval calls for, in order, and which reaches its EOI marker (Pillow refuses one that ends without it), decodes:
whole and at a reduced size (``draft``) alike.

``decodes_without_error`` says True only for such a file, checked strictly: a marker out of place, fill bytes,
an unknown marker, progressive or arithmetic coding, more than one scan, four components or unusual sampling all
give False, which means "not known without decoding", never "cannot be decoded". The check costs a small part of
what a decode costs (figures in bench/README.md, "Export"). tests/export/test_jpeg_markers.py damages
JPEGs many thousand ways and holds that every file it passes decodes.
"""

from functools import lru_cache
from typing import Optional

import numpy as np

_MAX_DIMENSION = 65500  # JPEG_MAX_DIMENSION
_TABLES = 4  # NUM_HUFF_TBLS, NUM_QUANT_TBLS
_EOI = 0xD9


def _complete_code(bits: bytes) -> bool:
    """``jpeg_make_d_derived_tbl``'s check that the code counts of lengths 1-16 give a legal Huffman code."""
    code = 0
    for length, count in enumerate(bits, start=1):
        code += count
        if code >= 1 << length:
            return False
        code <<= 1
    return True


# Encoders reuse their tables and sizes from file to file: each segment is checked once (a third of the check).
@lru_cache(maxsize=256)
def _huffman_tables(body: bytes) -> Optional[frozenset]:
    """The tables a DHT segment defines, by their index byte (0-3 DC, 0x10-0x13 AC), when each has a legal code
    and a DC table's symbols go up to 15 at most; else None."""
    defined, position = set(), 0
    while len(body) - position > 16:
        index, bits = body[position], body[position + 1 : position + 17]
        count = sum(bits)
        symbols = body[position + 17 : position + 17 + count]
        if len(symbols) != count or index & 0x0F >= _TABLES or index >> 4 > 1 or not _complete_code(bits):
            return None
        if not index >> 4 and max(symbols, default=0) > 15:
            return None
        defined.add(index)
        position += 17 + count
    return frozenset(defined) if position == len(body) else None


@lru_cache(maxsize=256)
def _quantization_tables(body: bytes) -> Optional[frozenset]:
    """The indexes a DQT segment defines, when each table has an index 0-3 and 64 values of one or two bytes and
    they fill the segment; else None."""
    defined, position = set(), 0
    while position < len(body):
        index, precision = body[position] & 0x0F, body[position] >> 4
        end = position + 1 + 64 * (precision + 1)
        if index >= _TABLES or precision > 1 or end > len(body):
            return None
        defined.add(index)
        position = end
    return frozenset(defined)


@lru_cache(maxsize=256)
def _frame(body: bytes):
    """(component ids, their quantization tables, MCUs in the image) of an 8-bit grey or three-component
    frame whose first component is sampled 1 or 2 each way and the others once; else None."""
    if len(body) < 6 or body[0] != 8:
        return None
    height, width, count = int.from_bytes(body[1:3], "big"), int.from_bytes(body[3:5], "big"), body[5]
    if not (0 < height <= _MAX_DIMENSION and 0 < width <= _MAX_DIMENSION) or count not in (1, 3):
        return None
    if len(body) != 6 + 3 * count:
        return None
    ids, samplings, tables = body[6::3], body[7::3], body[8::3]
    across, down = samplings[0] >> 4, samplings[0] & 0x0F
    if len(set(ids)) != count or across not in (1, 2) or down not in (1, 2) or max(tables) >= _TABLES:
        return None
    if count == 1:  # a one-component scan has a block for an MCU, whatever the sampling says
        across = down = 1
    elif any(sampling != 0x11 for sampling in samplings[1:]):
        return None
    mcus = -(-width // (8 * across)) * -(-height // (8 * down))
    return ids, tables, mcus


def _scan_ends_cleanly(content: bytes, start: int, restarts: int) -> bool:
    """From ``start`` on, only stuffed bytes and ``restarts`` restart markers in order, then EOI."""
    data = np.frombuffer(content, np.uint8)
    markers = data[start:-1] == 0xFF  # an 0xFF not followed by a stuffed zero (numpy: a third of a regex's time)
    markers &= data[start + 1 :] != 0
    for seen, position in enumerate(np.flatnonzero(markers)):
        code = content[start + position + 1]
        if code != 0xD0 + seen % 8 or seen == restarts:
            return code == _EOI and seen == restarts
    return False  # cut short: no EOI


def decodes_without_error(content: bytes) -> bool:
    """True when the JPEG ``content`` is known from its markers to decode without error (see the module)."""
    if not content.startswith(b"\xff\xd8"):
        return False
    position, huffman, quantization, frame, interval = 2, set(), set(), None, 0
    while True:  # the segments up to the scan, each right after the one before
        if position + 4 > len(content) or content[position] != 0xFF:
            return False
        marker = content[position + 1]
        end = position + 2 + int.from_bytes(content[position + 2 : position + 4], "big")
        if end < position + 4 or end > len(content):
            return False
        body = content[position + 4 : end]
        if marker == 0xDA:
            break
        if 0xE0 <= marker <= 0xEF or marker == 0xFE:  # APPn, COM: skipped by libjpeg
            pass
        elif marker == 0xDB and (tables := _quantization_tables(body)) is not None:
            quantization |= tables
        elif marker == 0xC4 and (tables := _huffman_tables(body)) is not None:
            huffman |= tables
        elif marker == 0xDD and len(body) == 2:
            interval = int.from_bytes(body, "big")
        elif marker in (0xC0, 0xC1) and frame is None and (frame := _frame(body)) is not None:
            pass
        else:
            return False
        position = end
    if frame is None:
        return False
    ids, tables, mcus = frame
    count = len(ids)
    # the scan: every component in the frame's order, defined tables, the full spectrum (Ss 0, Se 63, Ah/Al 0)
    if len(body) != 4 + 2 * count or body[0] != count or body[-3:] != b"\x00\x3f\x00" or body[1:-3:2] != ids:
        return False
    selectors = body[2:-3:2]
    if any(s >> 4 not in huffman or 0x10 | s & 0x0F not in huffman for s in selectors):
        return False
    if not set(tables) <= quantization:
        return False
    restarts = -(-mcus // interval) - 1 if interval else 0
    return _scan_ends_cleanly(content, end, restarts)
