"""Small JPEG thumbnails of the images shown, made on every core and cached, or the reason an image cannot be shown.

A local image whose digest ``image_digests`` remembers (its ``stat`` unchanged) is looked up in the cache
(``thumbnail_cache``) without being read. Any other image's bytes are read once (through fsspec, like datasets' own
decoding: M2KR's ``splitzip://``), hashed, and looked up before any pixel is decoded.
"""

import base64
import io
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import fsspec
from PIL import Image
from PIL import UnidentifiedImageError

import mmr_cache
from mmr_inputs import InputError
from mmr_inputs import open_regular
from mmrhub.cores import usable_cores
from mmrhub.image_digests import local_file_digests
from mmrhub.report.thumbnail_cache import ThumbnailCache

THUMBNAIL_PX = 96
JPEG_QUALITY = 75  # 96 px thumbnails of about 3-5 KB: a 50-query page stays well under 20 MB

# Failure kinds: the page's one line counts images per kind.
NOT_READ = "not read (--no-check-images reads no archive)"
NOT_FOUND = "not found"  # the builder could not find the archive or folder: its message is the detail
MISSING = "missing"
NOT_AN_IMAGE = "not an image Pillow can read"
TOO_LARGE = "over Pillow's MAX_IMAGE_PIXELS"
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Failure:
    """Why an image cannot be shown: ``kind`` groups it in the page's one line, ``detail`` names the file."""

    kind: str
    detail: str


def where(reference) -> str:
    """The file (or archive member) a reference points to, for messages."""
    return (reference.get("path") or "(image bytes)").split("::", 1)[0]


def read_bytes(reference) -> bytes:
    """The bytes of an undecoded ``datasets.Image`` value ({bytes, path})."""
    if reference["bytes"] is not None:
        return reference["bytes"]
    path = reference["path"]
    with open_regular(path) if "://" not in path else fsspec.open(path, "rb") as handle:  # archive members: fsspec
        return handle.read()


def shrink(data: bytes, size: int = THUMBNAIL_PX) -> bytes:
    """A JPEG of at most ``size`` px a side. Opening lazily lets ``Image.thumbnail`` decode a JPEG at 1/2 to 1/8
    scale (``draft``); the pixel limit is checked before any pixel is decoded."""
    image = Image.open(io.BytesIO(data))
    limit = Image.MAX_IMAGE_PIXELS
    if limit and image.width * image.height > limit:
        raise Image.DecompressionBombError(f"{image.width}x{image.height} px")
    image.thumbnail((size, size))
    image = image.convert("RGB")  # JPEG has no alpha or palette (PNG screenshots)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return buffer.getvalue()


def data_uri(jpeg: bytes) -> str:
    """The JPEG inline, as an ``<img src>``."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def cache_key(digest: str, size: int) -> str:
    """The cache's key of an image's thumbnail: the xxh3-128 of its bytes and the size."""
    return f"{digest}-{size}px"


def thumbnail(reference, cache: ThumbnailCache, size: int = THUMBNAIL_PX, known=None):
    """(data URI or Failure, whether the cache held it). ``known``: the image's ``xxh3:`` digest where
    ``image_digests`` remembers it (a local file whose ``stat`` is unchanged), so a cached thumbnail is served
    without reading the image."""
    if reference is None:
        return Failure(NOT_READ, "no image was read: --no-check-images reads no archive"), False
    if known is not None:
        jpeg = cache.get(cache_key(known.removeprefix("xxh3:"), size))
        if jpeg is not None:
            return data_uri(jpeg), True
    try:
        data = read_bytes(reference)
    except FileNotFoundError:
        return Failure(MISSING, f"{where(reference)} is missing"), False
    except (OSError, InputError) as error:  # InputError: not a regular file, with its path
        return Failure(
            UNREADABLE, str(error) if isinstance(error, InputError) else f"{where(reference)}: {error}"
        ), False
    key = cache_key(mmr_cache.bytes_hash(data), size)  # of the bytes read, whatever was known before
    jpeg = cache.get(key)
    if jpeg is not None:
        return data_uri(jpeg), True
    try:
        jpeg = shrink(data, size)
    except UnidentifiedImageError:
        return Failure(NOT_AN_IMAGE, f"{where(reference)} is not an image Pillow can read"), False
    except Image.DecompressionBombError as error:
        limit = f"{Image.MAX_IMAGE_PIXELS:,}"
        return Failure(TOO_LARGE, f"{where(reference)} is over Pillow's limit of {limit} px ({error})"), False
    except (OSError, ValueError, SyntaxError) as error:  # Pillow's errors for truncated or malformed files
        return Failure(UNREADABLE, f"{where(reference)}: {error}"), False
    cache.put(key, jpeg)
    return data_uri(jpeg), False


def thumbnails(references: list, cache: ThumbnailCache, size: int = THUMBNAIL_PX) -> tuple:
    """([data URI or Failure per reference], cache hits), on a thread per core: Pillow releases the GIL while it
    decodes, and fsspec keeps a filesystem instance per thread. A progress bar on stderr when it is a terminal."""
    from tqdm.auto import tqdm

    known = local_file_digests([None if ref is None or ref["bytes"] is not None else ref["path"] for ref in references])
    with warnings.catch_warnings(), ThreadPoolExecutor(usable_cores()) as pool:
        # shrink checks the pixel limit itself and reports it per image; Pillow's own warning would repeat it.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        jobs = pool.map(lambda reference, digest: thumbnail(reference, cache, size, digest), references, known)
        bar = tqdm(
            jobs,
            total=len(references),
            desc="thumbnails",
            unit="image",
            file=sys.stderr,
            disable=not sys.stderr.isatty(),
            leave=False,
        )
        results = list(bar)
    return [uri for uri, _ in results], sum(hit for _, hit in results)
