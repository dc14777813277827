"""Files read in place, a byte range at a time, on any fsspec file system (local, ``http(s)://``, ``hf://``, ...).

``state_of`` says what a file is (its size and version: the server's ``ETag``, the Hub's blob id) without reading
it, and ``RangeReader.read(start, end)`` reads exactly those bytes with one request: no read-ahead (fsspec's files
read 5 MiB blocks by default), never a range-less GET (fsspec HTTP's ``info`` falls back to one, and its
``cat_file`` reads whatever the server sends). ``read_ranges`` reads many ranges with many requests in flight, and
``read_many`` the bytes of many fsspec URLs (archive members) in order, reading ahead.

Over HTTP each answer is checked before its body is read: a server that ignores ``Range`` (a 200 of the whole file),
an answer for other bytes than asked, a file whose ``ETag`` or size changed since ``state_of``, and a 404 are each
said in one line, as are an answer cut short, a redirect loop and a server that stalls. An ``hf://`` file is
resolved once per process to the URL the Hub redirects to (its CDN), pinned to the same commit, and its ranges are
read there; an expired or refused URL (403, 410) is resolved again.

Every request has a connect timeout and a read timeout (no byte for that long), and at most ``requests_in_flight``
are open at once: ``configure`` (``m2kr.load``'s keywords, the commands' ``--max-requests`` and ``--read-timeout``)
sets them for this process and the processes it starts.

Needs fsspec only (aiohttp for ``http(s)://``, huggingface_hub for ``hf://``, through fsspec), so DataLoader workers
started with "spawn" use it without importing ``datasets``.
"""

import asyncio
import contextlib
import dataclasses
import math
import os
import re
import threading
import urllib.parse
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable
from typing import Iterator
from typing import Optional

import fsspec
import fsspec.archive
import fsspec.asyn

# fsspec info fields that identify a file's version, by file system: HTTP's ETag, the Hub's blob and xet ids, ...
_VERSION_FIELDS = ("ETag", "etag", "blob_id", "xet_hash", "LastModified", "last_modified", "mtime", "created")
_OFFLINE = ("1", "ON", "YES", "TRUE")

# --- settings: how long a request may wait, how many are open at once -------------------------------------------

CONNECT_TIMEOUT_S = 10.0  # to open a connection
READ_TIMEOUT_S = 60.0  # the default longest wait for the next byte of an answer (headers included)
# Requests in flight, by the bandwidth-delay rule: to keep a link of LINK_BYTES_PER_S busy while each request waits
# REQUEST_DELAY_S for its first byte (a far server's round trip and its own time), the bytes in flight must cover
# bandwidth x delay; twice that (50 MB here) keeps it busy while half the requests wait. In requests of the reads'
# mean size, between MIN_REQUESTS and MAX_REQUESTS.
LINK_BYTES_PER_S = 125_000_000  # 1 Gbit/s
REQUEST_DELAY_S = 0.2
IN_FLIGHT_BYTES = 2 * LINK_BYTES_PER_S * REQUEST_DELAY_S
MIN_REQUESTS, MAX_REQUESTS = 4, 64
# The settings as the environment carries them to every process this one starts (DataLoader workers, spawned too).
_SETTINGS = {
    "max_requests": "MMRHUB_MAX_REQUESTS",
    "read_timeout": "MMRHUB_READ_TIMEOUT",
    "check_etags": "MMRHUB_CHECK_ETAGS",
}
_MAX_REDIRECTS = 10


class RemoteReadError(OSError):
    """A remote file that cannot be read in place as it should be; one line saying what to do."""


class RemoteChanged(RemoteReadError):
    """A remote file whose version changed since its state was taken."""


def configure(max_requests: Optional[int] = None, read_timeout: Optional[float] = None, check_etags=None) -> None:
    """Set this process's requests in flight (``max_requests``), read timeout in seconds and whether answers' ETags
    are checked, for it and the processes it starts; None leaves a setting as it is."""
    if max_requests is not None:
        if isinstance(max_requests, bool) or not isinstance(max_requests, int) or not 1 <= max_requests <= 1024:
            raise ValueError(f"max_requests={max_requests!r}: expected a whole number of requests from 1 to 1024.")
        os.environ[_SETTINGS["max_requests"]] = str(max_requests)
    if read_timeout is not None:
        if isinstance(read_timeout, bool) or not isinstance(read_timeout, (int, float)) or not read_timeout > 0:
            raise ValueError(f"read_timeout={read_timeout!r}: expected a number of seconds above 0.")
        os.environ[_SETTINGS["read_timeout"]] = repr(float(read_timeout))
    if check_etags is not None:
        os.environ[_SETTINGS["check_etags"]] = "1" if check_etags else "0"


@contextlib.contextmanager
def settings(**given):
    """``configure(**given)`` until the block ends, then the settings as they were (a command's flags)."""
    before = {name: os.environ.get(variable) for name, variable in _SETTINGS.items()}
    try:
        configure(**given)
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(_SETTINGS[name], None)
            else:
                os.environ[_SETTINGS[name]] = value


def read_timeout() -> float:
    """Seconds a request may wait for its next byte (``configure``; ``READ_TIMEOUT_S`` by default)."""
    value = os.environ.get(_SETTINGS["read_timeout"])
    try:
        return float(value) if value else READ_TIMEOUT_S
    except ValueError:
        return READ_TIMEOUT_S


def etags_checked() -> bool:
    """Whether each answer's ETag must be the file's (``configure(check_etags=False)`` turns it off)."""
    return os.environ.get(_SETTINGS["check_etags"], "1") != "0"


def requests_in_flight(mean_bytes: Optional[float] = None) -> int:
    """How many requests may be open at once: ``configure(max_requests=N)``, else the bandwidth-delay rule for reads
    of ``mean_bytes`` each (``MAX_REQUESTS`` when unknown)."""
    given = os.environ.get(_SETTINGS["max_requests"])
    if given and given.isdigit() and int(given) > 0:
        return int(given)
    if not mean_bytes:
        return MAX_REQUESTS
    return max(MIN_REQUESTS, min(MAX_REQUESTS, math.ceil(IN_FLIGHT_BYTES / mean_bytes)))


# --- what a file is --------------------------------------------------------------------------------------------


def is_local(fs) -> bool:
    """Whether ``fs`` is the local file system."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "file" in protocols or "local" in protocols


def is_http(fs) -> bool:
    """Whether ``fs`` is fsspec's HTTP file system."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol
    return "http" in protocols or "https" in protocols


def huggingface_hub_offline() -> bool:
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
    if _on_hub(fs) and huggingface_hub_offline():
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
    if huggingface_hub_offline():
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


# --- reading ranges --------------------------------------------------------------------------------------------


class RangeReader:
    """Exact byte ranges of one file: one request per ``read`` (one ``pread`` locally).

    Over HTTP, and for ``hf://`` files (read from the URL the Hub redirects to), reads go through aiohttp on
    fsspec's event loop, so ``read_ranges`` keeps many open at once. ``reads`` and ``bytes_read`` count what it
    asked for (what bench/remote_archive_reads.py reports).
    """

    def __init__(self, fs, path: str, name: str, size: int, version: Optional[str], advice: str = "", opener=None):
        self.fs, self.path, self.name, self.size, self.version = fs, path, name, size, version
        self.advice, self._opener = advice, opener
        self.reads = self.bytes_read = 0
        self._file = None
        self._hub = _HubFile(fs, path, name, size) if _on_hub(fs) else None
        # The ETag every answer must carry: the HEAD's over HTTP; on the Hub, the CDN's first answer's.
        self.etag = version if is_http(fs) else None

    @property
    def over_http(self) -> bool:
        """Whether reads are HTTP requests (``http(s)://``, and ``hf://`` files through the Hub's redirect)."""
        return is_http(self.fs) or self._hub is not None

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive); fewer than asked is an error naming the file."""
        return read_ranges([(self, start, end)])[0]

    def _read_here(self, start: int, end: int) -> bytes:
        if self._file is None:
            self._file = self._open()
        self._file.seek(start)
        data = self._file.read(end - start)
        self._count(start, end, data)
        return data

    def _count(self, start: int, end: int, data: bytes):
        self.reads += 1
        self.bytes_read += len(data)
        if len(data) != end - start:
            raise RemoteReadError(
                f"{self.name}: {len(data):,} bytes at byte {start:,} where {end - start:,} were asked: the file is "
                f"shorter than its listed size of {self.size:,} bytes (truncated or replaced)."
            )

    def _open(self):
        if self._opener is not None:
            return self._opener(self.path)
        if is_local(self.fs):
            return self.fs.open(self.path, "rb")
        # cache_type "none": each read is one request for exactly its bytes (no 5 MiB read-ahead block).
        return self.fs.open(self.path, "rb", cache_type="none")

    async def _http_range(self, session, start: int, end: int) -> bytes:
        """One range request (two where the Hub's URL expired), checked: see the module's docstring."""
        for attempt in range(2):
            url, headers, options = await self._target(session)
            headers = {**headers, "Range": f"bytes={start}-{end - 1}", "Accept-Encoding": "identity"}
            try:
                async with session.get(
                    url, headers=headers, timeout=_timeout(), max_redirects=_MAX_REDIRECTS, **options
                ) as response:
                    if self._hub is not None and response.status in (403, 410):
                        response.close()
                        if attempt == 0:
                            self._hub.expired(url)  # a signed URL that expired or was revoked: resolve again
                            continue
                        raise RemoteReadError(
                            f"{self.name}: the Hub's download URL was refused right after it was issued "
                            f"({response.status} {response.reason}); check the token and access to the repository."
                        )
                    self._check_answer(response, start, end)
                    await self._check_etag(session, url, options, response.headers.get("ETag"))
                    data = await _body(response, self.name, start, end)
            except (RemoteReadError, FileNotFoundError):
                raise
            except Exception as err:  # noqa: BLE001 - aiohttp's errors and timeouts: one line each
                raise _request_error(err, self.name, f"reading bytes {start:,}-{end - 1:,}") from None
            self._count(start, end, data)
            return data

    async def _target(self, session) -> tuple:
        """(URL, headers, request options) for a range of this file."""
        if self._hub is not None:
            url, headers = await self._hub.location(session)
            return url, headers, {}
        options = dict(self.fs.kwargs)
        headers = options.pop("headers", {}) or {}
        options.pop("timeout", None)
        return self.fs.encode_url(self.path), headers, options

    def _check_answer(self, response, start: int, end: int):
        """The answer is the range asked of the file described: else one line (before any of its body is read)."""
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
        served = _content_range(response.headers.get("Content-Range"))
        if served is not None and served[2] is not None and served[2] != self.size:
            response.close()
            raise RemoteChanged(
                f"{self.name} changed on the server since its directory was read (it is now {served[2]:,} bytes, "
                f"not {self.size:,}); load it again to read the new version."
            )
        length = response.headers.get("Content-Length")
        answered = (served[0], served[1] + 1) if served is not None else None
        if answered not in (None, (start, end)) or (
            length is not None and length.isdigit() and int(length) != end - start
        ):
            response.close()
            what = f"bytes {answered[0]:,}-{answered[1] - 1:,}" if answered else f"{int(length):,} bytes"
            raise RemoteReadError(
                f"{self.name}: the server answered a request for bytes {start:,}-{end - 1:,} with {what}: it does "
                f"not serve ranges exactly as asked, so reading members in place would move other bytes; stopped."
                f"{self.advice}"
            )

    async def _check_etag(self, session, url: str, options: dict, answered: Optional[str]):
        """The answer's ETag against the file's; on a difference, one HEAD tells a changed file from a server whose
        ETags change from one answer to the next."""
        if not etags_checked() or answered is None:
            return
        if self.etag is None:
            self.etag = answered  # the Hub's CDN: its first answer's tag stands for the pinned file
            return
        if _same_tag(answered, self.etag):
            return
        head = None
        with contextlib.suppress(Exception):
            async with session.head(url, timeout=_timeout(), allow_redirects=True, **options) as response:
                head = response.headers.get("ETag")
        if head is not None and _same_tag(head, answered):
            raise RemoteChanged(
                f"{self.name} changed on the server since its directory was read (ETag {self.etag} is now "
                f"{answered}); load it again to read the new version."
            )
        raise RemoteReadError(
            f"{self.name}: the server gives the same file a different ETag from one answer to the next ("
            f"{self.etag}, then {answered} on a range request, then {head or 'none'} on a HEAD), so a change of the "
            "file cannot be told from it and loading again would not help; pass check_etags=False "
            "(--no-etag-check) to rely on each part's size and each member's CRC-32 instead."
        )

    def close(self):
        """Close the file held open (local and non-HTTP file systems)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def read_ranges(jobs) -> list:
    """The bytes of each ``(reader, start, end)`` in ``jobs``, in order: HTTP reads all at once, at most
    ``requests_in_flight`` open (the first error stops the others); other file systems one after another."""
    jobs = list(jobs)
    if not jobs:
        return []
    if not all(reader.over_http for reader, _, _ in jobs):
        return [reader._read_here(start, end) for reader, start, end in jobs]
    limit = requests_in_flight(sum(end - start for _, start, end in jobs) / len(jobs))
    http = _http_fs(jobs[0][0].fs)
    return fsspec.asyn.sync(http.loop, _gather, http, jobs, limit)


async def _gather(http, jobs: list, limit: int) -> list:
    session = await http.set_session()
    gate = _gate()
    gate.limit = limit

    async def one(reader, start, end):
        async with gate:
            return await reader._http_range(session, start, end)

    tasks = [asyncio.ensure_future(one(*job)) for job in jobs]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    failed = next((task for task in tasks if not task.cancelled() and task.exception() is not None), None)
    if failed is not None:
        raise failed.exception()
    return [task.result() for task in tasks]


class _Gate:
    """At most ``limit`` requests of this process open at once, on fsspec's event loop."""

    def __init__(self):
        self.limit, self.open, self._condition = MAX_REQUESTS, 0, asyncio.Condition()

    async def __aenter__(self):
        async with self._condition:
            await self._condition.wait_for(lambda: self.open < self.limit)
            self.open += 1

    async def __aexit__(self, *exc):
        async with self._condition:
            self.open -= 1
            self._condition.notify_all()


_GATES = {}  # one per event loop (a forked child runs a new one)


def _gate() -> _Gate:
    loop = asyncio.get_running_loop()
    owner, gate = _GATES.get(id(loop), (None, None))
    if owner is not loop:
        gate = _Gate()
        _GATES[id(loop)] = (loop, gate)
    return gate


def _http_fs(fs):
    """The HTTP file system a reader's requests go through: its own over HTTP, fsspec's default one for the Hub."""
    return fs if is_http(fs) else fsspec.filesystem("http")


def _timeout():
    import aiohttp

    return aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_S, sock_read=read_timeout())


async def _body(response, name: str, start: int, end: int) -> bytes:
    """Exactly ``end - start`` bytes of ``response``: an answer cut short, longer or stalled is one line."""
    import aiohttp

    wanted = end - start
    data = bytearray()
    try:
        while len(data) < wanted:
            chunk = await response.content.read(wanted - len(data))
            if not chunk:
                break
            data += chunk
        if len(data) == wanted and await response.content.read(1):
            response.close()
            raise RemoteReadError(
                f"{name}: the server sent more than the {wanted:,} bytes asked at byte {start:,} (it does not "
                "serve ranges exactly as asked); serve the archives from a server that does (the Hub does)."
            )
    except RemoteReadError:
        raise
    except asyncio.TimeoutError:
        raise RemoteReadError(_stalled(name, f"after {len(data):,} of the {wanted:,} bytes asked at byte {start:,}"))
    except aiohttp.ClientError:  # the connection closed mid-answer: said below, with what came
        pass
    if len(data) < wanted:
        raise RemoteReadError(
            f"{name}: the server stopped sending after {len(data):,} of the {wanted:,} bytes asked at byte "
            f"{start:,} (the connection closed mid-answer); load it again, and if it keeps happening the server or "
            "a proxy is cutting answers short."
        )
    return bytes(data)


def _stalled(name: str, where: str) -> str:
    return (
        f"{name}: no byte came from the server for {read_timeout():g} s {where} (a stalled server or proxy); "
        "stopped. Load it again, or allow a longer wait with read_timeout= (--read-timeout SECONDS)."
    )


def _request_error(err: BaseException, name: str, doing: str) -> RemoteReadError:
    """One line for a failed request (aiohttp's errors carry no file name, some no message)."""
    import aiohttp

    if isinstance(err, getattr(aiohttp, "ConnectionTimeoutError", ())):  # aiohttp 3.10+
        return RemoteReadError(
            f"{name}: no connection to the server within {CONNECT_TIMEOUT_S:g} s (connect timeout) while "
            f"{doing}; check the URL and the network."
        )
    if isinstance(err, asyncio.TimeoutError):
        return RemoteReadError(_stalled(name, f"while {doing}"))
    if isinstance(err, aiohttp.TooManyRedirects):
        return RemoteReadError(
            f"{name}: the server redirected the request more than {_MAX_REDIRECTS} times (a redirect loop) while "
            f"{doing}; check the URL, or the server's redirect rules for range requests."
        )
    return RemoteReadError(f"{name}: cannot be reached ({type(err).__name__}: {err or 'no message'}) while {doing}.")


def _content_range(header: Optional[str]):
    """``(first, last, total)`` of a ``Content-Range: bytes a-b/total`` header (total None for ``*``), or None."""
    match = re.fullmatch(r"\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*", header or "")
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), None if match.group(3) == "*" else int(match.group(3))


def _same_tag(one: str, other: str) -> bool:
    """ETags compared weakly (RFC 9110 8.8.3.2): ``W/"x"`` and ``"x"`` name the same version."""
    return one.removeprefix("W/") == other.removeprefix("W/")


# --- hf:// files: resolved once per process to the Hub's CDN URL ------------------------------------------------

_LOCATIONS = {}  # resolve URL -> (the URL it redirects to, the headers that go with it), this process's
_HUB_FILES = {}  # resolve URL -> a _HubFile: every hf:// file this process has opened


def resolve_hub_files():
    """Resolve at once every ``hf://`` file this process has opened and not resolved yet: called before starting
    worker processes (a DataLoader's), which then inherit where to read each one rather than each asking again."""
    pending = [hub for url, hub in list(_HUB_FILES.items()) if url not in _LOCATIONS]
    if pending:
        http = fsspec.filesystem("http")
        fsspec.asyn.sync(http.loop, _resolve_all, http, pending)


async def _resolve_all(http, pending: list):
    session = await http.set_session()
    # ahead of time only: a file that cannot be resolved now says why when it is read
    await asyncio.gather(*(hub.location(session) for hub in pending), return_exceptions=True)


class _HubFile:
    """Where an ``hf://`` file's ranges are read: the URL ``resolve/<sha>/<file>`` redirects to (the Hub's CDN),
    asked once per process (one HEAD), again when it expires; the Hub's token goes only to the Hub's own host."""

    def __init__(self, fs, path: str, name: str, size: int):
        from huggingface_hub.utils import build_hf_headers

        self.name, self.size = name, size
        self.resolve_url = fs.url(path)
        self.headers = build_hf_headers(token=fs.token)
        self._locks = {}
        _HUB_FILES.setdefault(self.resolve_url, self)

    async def location(self, session) -> tuple:
        """(URL, headers) to read ranges from."""
        known = _LOCATIONS.get(self.resolve_url)
        if known is not None:
            return known
        loop = asyncio.get_running_loop()
        owner, lock = self._locks.get(id(loop), (None, None))
        if owner is not loop:
            lock = asyncio.Lock()
            self._locks[id(loop)] = (loop, lock)
        async with lock:  # reads started together resolve once
            known = _LOCATIONS.get(self.resolve_url)
            if known is None:
                known = _LOCATIONS[self.resolve_url] = await self._resolve(session)
        return known

    async def _resolve(self, session) -> tuple:
        """(URL, headers) the Hub sends this file's reads to: redirects on the Hub's own host are followed (a
        renamed repo), the first to another host (its CDN) is where ranges are read, with no token."""
        url = self.resolve_url
        for _ in range(_MAX_REDIRECTS):
            try:
                headers = {**self.headers, "Accept-Encoding": "identity"}
                async with session.head(url, headers=headers, timeout=_timeout(), allow_redirects=False) as response:
                    status, answer = response.status, response.headers
            except Exception as err:  # noqa: BLE001 - one line
                raise _request_error(err, self.name, "asking the Hub where it is") from None
            if status == 404:
                raise FileNotFoundError(_not_found(self.name))
            if status >= 400:
                raise RemoteReadError(f"{self.name}: the Hub answered {status} to a request for it.")
            size = answer.get("X-Linked-Size") or (answer.get("Content-Length") if status < 300 else None)
            if size is not None and size.isdigit() and int(size) != self.size:
                raise RemoteChanged(
                    f"{self.name} changed on the Hub since its directory was read (it is now {int(size):,} bytes, "
                    f"not {self.size:,}); load it again to read the new version."
                )
            if status not in (301, 302, 303, 307, 308) or "Location" not in answer:
                return url, self.headers  # served by the Hub itself (a small file kept in git)
            target = urllib.parse.urljoin(url, answer["Location"])
            if _origin(target) != _origin(self.resolve_url):
                return target, {}  # the CDN: the token never goes there
            url = target
        raise RemoteReadError(
            f"{self.name}: the Hub redirected the request more than {_MAX_REDIRECTS} times (a redirect loop) while "
            "asking where it is; check the repository's name."
        )

    def expired(self, url: str):
        """Forget ``url`` (refused or expired): the next read resolves again."""
        if _LOCATIONS.get(self.resolve_url, (None,))[0] == url:
            del _LOCATIONS[self.resolve_url]


def _origin(url: str) -> tuple:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, parts.netloc


# --- many files' bytes, read ahead -------------------------------------------------------------------------------

_CHUNKS_AHEAD = 2  # chunks read at once: while the first is handed out, the second keeps requests in flight


def read_many(paths: Iterable, on_error: str = "raise") -> Iterator:
    """The bytes of each fsspec URL of ``paths`` (an archive member's ``splitzip://...``, any ``http(s)://`` file),
    in order, read ahead: the next ones are read, with many requests in flight, while these are handed out. None
    for a path that is None. ``on_error="return"``: a path that cannot be read gives its error in its place.

    Paths are read in chunks of neighbours on one file system (``fs.cat``: an archive joins neighbouring members
    and reads its chunk's pieces at once); each chunk holds about half of ``IN_FLIGHT_BYTES`` (sizes come from an
    archive's directory) and at most four times ``requests_in_flight`` paths.
    """
    pool = ThreadPoolExecutor(_CHUNKS_AHEAD)
    pending = deque()
    chunks = _chunks(iter(paths))
    try:
        for chunk in chunks:
            pending.append((chunk, pool.submit(_read_chunk, chunk, on_error)))
            if len(pending) < _CHUNKS_AHEAD:
                continue
            yield from _results(*pending.popleft(), on_error)
        while pending:
            yield from _results(*pending.popleft(), on_error)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _chunks(paths: Iterator) -> Iterator:
    """(file system, [path within it or None]) runs of ``paths`` in order."""
    fs, members, size = None, [], 0
    for path in paths:
        if path is None:
            target, member = fs, None
        else:
            target, member = fsspec.core.url_to_fs(path)
        bound = 4 * requests_in_flight(_member_size(target, member) or None)
        if members and (target is not fs or size >= IN_FLIGHT_BYTES / _CHUNKS_AHEAD or len(members) >= bound):
            yield fs, members
            members, size = [], 0
        fs = target
        members.append(member)
        size += _member_size(target, member)
    if members:
        yield fs, members


def _member_size(fs, member) -> int:
    """A member's size from its archive's directory (no request); 0 when unknown."""
    if member is None or not isinstance(fs, fsspec.archive.AbstractArchiveFileSystem):
        return 0
    try:
        return fs.size(member)
    except (OSError, KeyError):
        return 0


def _read_chunk(chunk, on_error: str) -> list:
    fs, members = chunk
    wanted = [member for member in members if member is not None]
    found = fs.cat(wanted, on_error="return") if wanted else {}
    return [None if member is None else found.get(member) for member in members]


def _results(chunk, future, on_error: str) -> Iterator:
    try:
        contents = future.result()
    except Exception as err:  # noqa: BLE001 - a chunk that failed as a whole (the server, the network)
        if on_error != "return":
            raise
        contents = [None if member is None else err for member in chunk[1]]
    for content in contents:
        if isinstance(content, Exception) and on_error != "return":
            raise content
        yield content


# --- a part downloaded whole ---------------------------------------------------------------------------------------


def download(fs, path: str, name: str, size: int, version: Optional[str], target: Path) -> Path:
    """``path`` downloaded whole to ``target`` (a file not yet there): the answer's length, ETag and every byte
    counted against ``size`` and ``version``, written aside and renamed into place only when whole, so a cut or
    changed download is never kept."""
    aside = target.with_name(f"{target.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    reader = RangeReader(fs, path, name, size, version)
    try:
        if reader.over_http:
            http = _http_fs(fs)
            fsspec.asyn.sync(http.loop, _download, http, reader, aside)
        else:
            fs.get_file(path, str(aside))
            if aside.stat().st_size != size:
                raise RemoteReadError(
                    f"{name}: {aside.stat().st_size:,} bytes downloaded where {size:,} were listed; download again."
                )
        os.replace(aside, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            aside.unlink()
    return target


async def _download(http, reader: RangeReader, aside: Path):
    import aiohttp

    session = await http.set_session()
    url, headers, options = await reader._target(session)
    got = 0
    try:
        async with session.get(
            url, headers={**headers, "Accept-Encoding": "identity"}, timeout=_timeout(), **options
        ) as response:
            if response.status == 404:
                raise FileNotFoundError(_not_found(reader.name))
            if response.status != 200:
                raise RemoteReadError(f"{reader.name}: the server answered {response.status} {response.reason}.")
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) != reader.size:
                raise RemoteChanged(
                    f"{reader.name} changed on the server since it was listed (it is now {int(length):,} bytes, "
                    f"not {reader.size:,}); download again."
                )
            answered = response.headers.get("ETag")
            if etags_checked() and reader.etag and answered and not _same_tag(answered, reader.etag):
                raise RemoteChanged(
                    f"{reader.name} changed on the server since it was listed (ETag {reader.etag} is now "
                    f"{answered}); download again."
                )
            with open(aside, "wb") as out:
                with contextlib.suppress(aiohttp.ClientPayloadError):  # cut short: counted below
                    async for chunk in response.content.iter_chunked(1 << 20):
                        got += len(chunk)
                        if got > reader.size:
                            break
                        out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
    except (RemoteReadError, FileNotFoundError):
        raise
    except Exception as err:  # noqa: BLE001 - one line
        raise _request_error(err, reader.name, f"downloading it (after {got:,} bytes)") from None
    if got != reader.size:
        raise RemoteReadError(
            f"{reader.name}: the download {'stopped' if got < reader.size else 'ran past the end'} at {got:,} of its "
            f"{reader.size:,} bytes (the connection closed mid-answer, or the file changed); nothing was kept: "
            "download again."
        )


# --- HEAD, and messages --------------------------------------------------------------------------------------------


async def _http_head(fs, url: str, name: str) -> tuple:
    session = await fs.set_session()
    options = dict(fs.kwargs)
    headers = {**(options.pop("headers", {}) or {}), "Accept-Encoding": "identity"}
    options.pop("timeout", None)
    try:
        async with session.head(
            fs.encode_url(url), headers=headers, allow_redirects=True, timeout=_timeout(), **options
        ) as response:
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
        raise _request_error(err, name, "asking for its size") from None


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
