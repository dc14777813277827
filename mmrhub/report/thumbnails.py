"""Small JPEG thumbnails of the images shown, made on every core and cached, or the reason an image cannot be shown.

An image whose key is known without reading it is looked up in the cache (``thumbnail_cache``) first: a local image
whose digest ``image_digests`` remembers (its ``stat`` unchanged), and an archive member (M2KR's ``splitzip://``), by
its name, CRC-32 and size in the zip directory and the archive's parts' sizes and versions (its file system's
``ukey``): a warm report reads no image. The others are read once: archive members and remote files all at once,
many requests in flight (``mmr_remote.read_many``), local files on the decoding threads; an image without a known
key is hashed and looked up before any pixel is decoded.
"""

import base64
import io
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

import fsspec
from fsspec.archive import AbstractArchiveFileSystem
from PIL import Image
from PIL import UnidentifiedImageError

import mmr_cache
from mmr_inputs import InputError
from mmr_inputs import open_regular
from mmr_remote import RemoteReadError
from mmr_remote import read_many
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
    """The cache's key of an image's thumbnail: the xxh3-128 of its bytes (``xxh3:``), or an archive member's key
    (``member:``), and the size."""
    scheme, _, value = digest.rpartition(":")
    return f"{value}-{size}px" if scheme in ("", "xxh3") else f"{value}-{scheme}-{size}px"


def member_key(path) -> Optional[str]:
    """``member:<key>`` of an archive member (``splitzip://<member>::<parts>``) from its archive's directory, which
    its file system reads once (no byte of the member); None for any other path, or when the directory cannot be
    read (reading the image then says why)."""
    if path is None or "::" not in path:
        return None
    try:
        fs, member = fsspec.core.url_to_fs(path)
        if not isinstance(fs, AbstractArchiveFileSystem):
            return None
        return "member:" + fs.ukey(member)
    except (OSError, ValueError):
        return None


def thumbnail(reference, cache: ThumbnailCache, size: int = THUMBNAIL_PX, known=None, data=None):
    """(data URI or Failure, whether the cache held it). ``known``: the image's key where it is known without
    reading it (``xxh3:`` digest of a local file ``image_digests`` remembers, ``member:`` key of an archive member),
    so a cached thumbnail is served without reading the image. ``data``: its bytes, or the error reading them gave,
    where already read."""
    if reference is None:
        return Failure(NOT_READ, "no image was read: --no-check-images reads no archive"), False
    if known is not None:
        jpeg = cache.get(cache_key(known, size))
        if jpeg is not None:
            return data_uri(jpeg), True
    try:
        if isinstance(data, Exception):
            raise data
        data = read_bytes(reference) if data is None else data
    except RemoteReadError:
        raise  # the server or the network: no image would come, so the command stops with its one line
    except FileNotFoundError:
        return Failure(MISSING, f"{where(reference)} is missing"), False
    except (OSError, InputError) as error:  # InputError: not a regular file, with its path
        return Failure(
            UNREADABLE, str(error) if isinstance(error, InputError) else f"{where(reference)}: {error}"
        ), False
    key = cache_key(known if known is not None else mmr_cache.bytes_hash(data), size)
    if known is None or known.startswith("xxh3:"):
        jpeg = cache.get(key)  # another file with these bytes may have made it
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
    decodes, and fsspec keeps a filesystem instance per thread. The images whose thumbnails are cached under a key
    known beforehand are not read; the remote ones of the others are read at once, many requests in flight. A
    progress bar on stderr when it is a terminal."""
    from tqdm.auto import tqdm

    paths = [None if ref is None or ref["bytes"] is not None else ref["path"] for ref in references]
    known = [digest or member_key(path) for digest, path in zip(local_file_digests(paths), paths)]
    held = [
        cache.get(cache_key(digest, size)) if ref is not None and digest else None
        for ref, digest in zip(references, known)
    ]
    remote = [path is not None and "://" in path and jpeg is None for path, jpeg in zip(paths, held)]
    contents = read_many([path for path, wanted in zip(paths, remote) if wanted], on_error="return")
    with warnings.catch_warnings(), ThreadPoolExecutor(usable_cores()) as pool:
        # shrink checks the pixel limit itself and reports it per image; Pillow's own warning would repeat it.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        jobs = []
        for i, reference in enumerate(references):  # each remote image handed on as its bytes come
            if held[i] is not None:
                jobs.append(None)
            else:
                data = next(contents) if remote[i] else None
                jobs.append(pool.submit(thumbnail, reference, cache, size, known[i], data))
        bar = tqdm(
            jobs,
            total=len(references),
            desc="thumbnails",
            unit="image",
            file=sys.stderr,
            disable=not sys.stderr.isatty(),
            leave=False,
        )
        results = [(data_uri(held[i]), True) if job is None else job.result() for i, job in enumerate(bar)]
    return [uri for uri, _ in results], sum(hit for _, hit in results)
