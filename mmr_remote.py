"""Files read in place, a byte range at a time, on any fsspec file system (local, ``http(s)://``, ``hf://``, ...).

``state_of`` says what a file is (its size and version: the server's ``ETag``, the Hub's blob id) without reading
it, and ``RangeReader.read(start, end)`` reads exactly those bytes with one request: no read-ahead (fsspec's files
read 5 MiB blocks by default), never a range-less GET (fsspec HTTP's ``info`` falls back to one, and its
``cat_file`` reads whatever the server sends). Over HTTP each answer is checked before its body is read: a server
that ignores ``Range`` (a 200 of the whole file), a file whose ``ETag`` changed since ``state_of``, and a 404 are
each said in one line. An ``hf://`` file with the Hub offline is said in one line too.

Needs fsspec only (aiohttp for ``http(s)://``, huggingface_hub for ``hf://``, through fsspec), so DataLoader workers
started with "spawn" use it without importing ``datasets``.
"""

import dataclasses
import os
import re
from typing import Optional

import fsspec
import fsspec.asyn

# fsspec info fields that identify a file's version, by file system: HTTP's ETag, the Hub's blob and xet ids, ...
_VERSION_FIELDS = ("ETag", "etag", "blob_id", "xet_hash", "LastModified", "last_modified", "mtime", "created")
_OFFLINE = ("1", "ON", "YES", "TRUE")


class RemoteReadError(OSError):
    """A remote file that cannot be read in place as it should be; one line saying what to do."""


class RemoteChanged(RemoteReadError):
    """A remote file whose version changed since its state was taken."""


def is_local(fs) -> bool:
    """Whether ``fs`` is the local file system."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "file" in protocols or "local" in protocols


def is_http(fs) -> bool:
    """Whether ``fs`` is fsspec's HTTP file system."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "http" in protocols or "https" in protocols


def hub_offline() -> bool:
    """Whether huggingface_hub may not be asked (HF_HUB_OFFLINE), read as huggingface_hub reads it."""
    flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    try:
        from huggingface_hub import constants  # already imported when hf:// is in use

        return bool(constants.HF_HUB_OFFLINE)
    except ImportError:
        return flag.upper() in _OFFLINE


def state_of(fs, path: str, name: str) -> tuple:
    """``(size, version)`` of ``path`` on ``fs`` (``name``: how messages call it); version None when the host
    gives none. One HEAD over HTTP, never a GET."""
    if is_http(fs):
        return fsspec.asyn.sync(fs.loop, _http_head, fs, path, name)
    if _on_hub(fs) and hub_offline():
        raise RemoteReadError(_offline_line(name))
    try:
        info = fs.info(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name}: not found; check the path.") from None
    except Exception as err:  # noqa: BLE001 - every failure to ask the host is one line
        problem = (
            _offline_line(name) if _offline_error(err) else f"{name}: cannot be read ({type(err).__name__}: {err})."
        )
        raise RemoteReadError(problem) from None
    version = next((str(info[field]) for field in _VERSION_FIELDS if info.get(field) is not None), None)
    return info["size"], version


def pinned(url: str, storage_options=None) -> str:
    """An ``hf://`` folder or file at the commit its revision names now (other URLs as they are), so that a
    reference keeps reading the bytes its zip directory describes, whatever is pushed to the repo later."""
    if not url.startswith("hf://"):
        return url
    if hub_offline():
        raise RemoteReadError(_offline_line(url))
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    try:
        resolved = fs.resolve_path(path)
        if re.fullmatch(r"[0-9a-f]{40}", resolved.revision or ""):
            return url
        from huggingface_hub import HfApi

        api = HfApi(endpoint=fs.endpoint, token=fs.token)
        sha = api.repo_info(resolved.repo_id, repo_type=resolved.repo_type, revision=resolved.revision).sha
    except FileNotFoundError:
        raise FileNotFoundError(f"{url}: no such repo or revision on the Hub; check the path.") from None
    except Exception as err:  # noqa: BLE001 - every failure to ask the Hub is one line
        problem = _offline_line(url) if _offline_error(err) else f"{url}: cannot be read ({type(err).__name__}: {err})."
        raise RemoteReadError(problem) from None
    return "hf://" + dataclasses.replace(resolved, revision=sha, _raw_revision=None).unresolve()


class RangeReader:
    """Exact byte ranges of one file: one request per ``read`` (one ``pread`` locally).

    ``reads`` and ``bytes_read`` count what it asked for (what bench/remote_archive_reads.py reports).
    """

    def __init__(self, fs, path: str, name: str, size: int, version: Optional[str], advice: str = "", opener=None):
        self.fs, self.path, self.name, self.size, self.version = fs, path, name, size, version
        self.advice, self._opener = advice, opener
        self.reads = self.bytes_read = 0
        self._file = None

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive); fewer than asked is an error naming the file."""
        if end <= start:
            return b""
        if is_http(self.fs):
            data = fsspec.asyn.sync(self.fs.loop, self._http_range, start, end)
        else:
            if self._file is None:
                self._file = self._open()
            self._file.seek(start)
            data = self._file.read(end - start)
        self.reads += 1
        self.bytes_read += len(data)
        if len(data) != end - start:
            raise RemoteReadError(
                f"{self.name}: {len(data):,} bytes at byte {start:,} where {end - start:,} were asked: the file is "
                f"shorter than its listed size of {self.size:,} bytes (truncated or replaced)."
            )
        return data

    def _open(self):
        if self._opener is not None:
            return self._opener(self.path)
        if is_local(self.fs):
            return self.fs.open(self.path, "rb")
        # cache_type "none": each read is one request for exactly its bytes (no 5 MiB read-ahead block).
        return self.fs.open(self.path, "rb", cache_type="none")

    async def _http_range(self, start: int, end: int) -> bytes:
        session = await self.fs.set_session()
        options = dict(self.fs.kwargs)
        headers = {**options.pop("headers", {}), "Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity"}
        async with session.get(self.fs.encode_url(self.path), headers=headers, **options) as response:
            if response.status == 404:
                raise FileNotFoundError(_not_found(self.name))
            if response.status == 200:
                response.close()  # the whole file is coming: hang up before its body is read
                raise RemoteReadError(
                    f"{self.name}: the server ignores range requests (it answered one with the whole file), so "
                    f"reading one member would download this {self.size:,}-byte file whole; stopped.{self.advice}"
                )
            if response.status != 206:
                response.close()
                raise RemoteReadError(
                    f"{self.name}: the server answered {response.status} {response.reason} to a range request."
                )
            now = response.headers.get("ETag")
            if self.version is not None and now is not None and now != self.version:
                response.close()
                raise RemoteChanged(
                    f"{self.name} changed on the server since its directory was read (ETag {self.version} is now "
                    f"{now}); load it again to read the new version."
                )
            return await response.read()

    def close(self):
        """Close the file held open (local and non-HTTP file systems)."""
        if self._file is not None:
            self._file.close()
            self._file = None


async def _http_head(fs, url: str, name: str) -> tuple:
    session = await fs.set_session()
    options = dict(fs.kwargs)
    headers = {**options.pop("headers", {}), "Accept-Encoding": "identity"}
    try:
        async with session.head(fs.encode_url(url), headers=headers, allow_redirects=True, **options) as response:
            if response.status == 404:
                raise FileNotFoundError(_not_found(name))
            if response.status >= 400:
                raise RemoteReadError(f"{name}: the server answered {response.status} {response.reason}.")
            length = response.headers.get("Content-Length")
            if length is None or response.headers.get("Content-Encoding", "identity") != "identity":
                raise RemoteReadError(
                    f"{name}: the server gives no size for it (no Content-Length), so it cannot be read in place."
                )
            return int(length), response.headers.get("ETag")
    except (FileNotFoundError, RemoteReadError):
        raise
    except Exception as err:  # noqa: BLE001 - aiohttp's many connection errors: one line
        raise RemoteReadError(f"{name}: cannot be reached ({type(err).__name__}: {err}).") from None


def _not_found(name: str) -> str:
    return f"{name}: not found (the server answered 404 Not Found); check the URL."


def _on_hub(fs) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "hf" in protocols


def _offline_line(name: str) -> str:
    return (
        f"{name} is on the Hub, but the Hub is offline (HF_HUB_OFFLINE is set); unset HF_HUB_OFFLINE, or pass a "
        "local folder holding the files."
    )


def _offline_error(err: BaseException) -> bool:
    while err is not None:
        if type(err).__name__ == "OfflineModeIsEnabled":
            return True
        err = err.__cause__ or err.__context__
    return False
