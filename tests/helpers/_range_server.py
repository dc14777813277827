"""A real HTTP server on 127.0.0.1 for tests and benchmarks that read data remotely, counting what it sends.

- ``/files/<path>``: the files of a folder, with single-range ``Range`` support (206, ``Content-Range``), ``ETag``,
  ``Content-Length``, ``HEAD``; 404 for anything else. ``ranges = False`` makes it a server without Range support
  (every GET is a 200 of the whole file, and no ``Accept-Ranges``).
- The Hub routes ``huggingface_hub``'s ``HfFileSystem`` uses (read from huggingface_hub 2.4's ``hf_api.py`` and
  ``hf_file_system.py``), for the repos added with ``add_repo``, under ``HF_ENDPOINT`` = ``server.url``:
  ``GET /api/datasets/{repo}[/revision/{rev}]`` (repo_info), ``GET /api/datasets/{repo}/tree/{rev}[/{path}]``
  (list_repo_tree), ``POST /api/datasets/{repo}/paths-info/{rev}`` (get_paths_info) and
  ``GET|HEAD /datasets/{repo}/resolve/{rev}/{path}``, which answers as the Hub does for a file kept in LFS or Xet: a
  302 to a signed URL on another host (``server.cdn_url``, a second listener: another origin, so huggingface_hub
  does not follow it for metadata and sends no token there), with ``X-Repo-Commit``, ``X-Linked-Etag`` and
  ``X-Linked-Size``. The CDN serves the file with Range as above until ``expire_cdn()``, then answers 403 to every
  URL issued before. ``cdn = False`` serves files from ``resolve`` itself.

Every request is logged as it starts and again as it ends (``server.requests``: method, path, Range header, status,
body bytes actually sent, and its start's and end's places in the one sequence of the server's events; the end just
before its last bytes go out, so a request is never counted open after its client has it all), so a test asserts
requests, bytes moved and requests in flight (``max_in_flight``) from the server's own log, never from timing.
Emulating a far server and a faulty one:

- ``delay``: seconds each request waits before it is answered (a round trip); ``rate``: bytes a second that all
  answers' bodies share (a token bucket: a capped link);
- ``stall_after``: a range answer sends that many bytes of its body and then nothing until the client hangs up;
  ``cut_after``: any answer sends that many and closes the connection; ``range_end_ignored``: a range answer runs
  from the start asked to the end of the file; ``redirect_loop``: a range request is redirected to itself;
- ``etag_mode``: ``"per-answer"`` (a new ETag on every answer) or ``"weak-ranges"`` (range answers' ETag weak).

``hold_until(n, pattern)`` makes a test of requests in flight independent of the machine's speed: the requests whose
path holds ``pattern`` wait until ``n`` of them are open at once (then it is spent), or until none has come for
``patience`` seconds (a lone request, such as a zip directory's read; a client that never opens ``n`` waits that
long each time, and the log shows fewer).

Also ``split_zip``: a zip with zip64 end records split at byte level.
"""

import hashlib
import http.server
import io
import itertools
import json
import math
import os
import re
import select
import socket
import struct
import threading
import time
import urllib.parse
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

_CHUNK = 1 << 16
# huggingface_hub's file URL below its endpoint (constants.HUGGINGFACE_CO_URL_TEMPLATE, made at import from HF_ENDPOINT)
HUB_URL_TEMPLATE = "/{repo_id}/resolve/{revision}/{filename}"
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class Request:
    """One request as the server saw and answered it."""

    method: str
    path: str
    range: Optional[str]
    status: int = 0  # 0 until answered
    sent: int = 0  # body bytes written to the socket
    start: int = 0  # its start's place in the server's sequence of events
    end: Optional[int] = None  # its end's place (None while open)
    host: str = "hub"  # "hub" (files, the Hub's routes) or "cdn"
    began: float = 0.0  # time.monotonic() at its start and end: for the bench's mean in flight only
    finished: float = 0.0


class TokenBucket:
    """A link of ``rate`` bytes a second shared by every answer: each chunk waits for its turn on the link."""

    def __init__(self, rate: float):
        self.rate, self._free, self._lock = rate, 0.0, threading.Lock()

    def take(self, size: int):
        with self._lock:
            now = time.monotonic()
            self._free = max(self._free, now) + size / self.rate
            until = self._free
        time.sleep(max(0.0, until - time.monotonic()))


class _Listener(http.server.ThreadingHTTPServer):
    """A thread per connection, and room for the many a reader opens at once (the default backlog of 5 drops
    connections beyond it, which the client sends again a second later)."""

    daemon_threads = True
    request_queue_size = 256


class RangeServer:
    """A threaded HTTP server over ``root`` (``/files/...``) and Hub repos; ``with RangeServer(root) as server``."""

    def __init__(self, root, ranges: bool = True):
        self.root = Path(root)
        self.ranges = ranges
        self.repos = {}  # repo id -> (folder, commit sha)
        self.requests = []
        self.delay = 0.0
        self.rate = None
        self.stall_after = self.cut_after = None
        self.range_end_ignored = self.redirect_loop = False
        self.etag_mode = None
        self.cdn = True
        self._generation = 0  # CDN URLs of older generations have expired
        self._answers = itertools.count()
        self._events = itertools.count()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._bucket = None
        self._held = None  # (count, pattern, patience) of hold_until, while it is not spent
        self._arrived = threading.Condition(self._lock)
        self._httpd = _Listener(("127.0.0.1", 0), _handler(self, "hub"))
        self._cdn = _Listener(("127.0.0.1", 0), _handler(self, "cdn"))
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self.cdn_url = f"http://127.0.0.1:{self._cdn.server_address[1]}"
        self._threads = [
            threading.Thread(target=h.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for h in (self._httpd, self._cdn)
        ]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self._closing.set()  # stalled answers let go
        for httpd in (self._httpd, self._cdn):
            httpd.shutdown()
            httpd.server_close()

    def file_url(self, relative: str) -> str:
        """The URL of ``root/relative``."""
        return f"{self.url}/files/{relative}"

    def add_repo(self, repo_id: str, folder) -> str:
        """Serve ``folder`` as dataset repo ``repo_id``; returns its (fake, stable) commit sha."""
        sha = hashlib.sha1(repo_id.encode()).hexdigest()
        self.repos[repo_id] = (Path(folder), sha)
        return sha

    def expire_cdn(self):
        """Every CDN URL issued so far expires: the CDN answers 403 to it."""
        with self._lock:
            self._generation += 1

    def hold_until(self, count: int, pattern: str, patience: float = 2.0):
        """Hold the requests whose path holds ``pattern`` until ``count`` of them are open at once, then no more;
        a request that no other joins for ``patience`` seconds goes on alone."""
        with self._lock:
            self._held = (count, pattern, patience)

    def _wait_for_company(self, record: "Request"):
        with self._arrived:
            held = self._held
            if held is None or held[1] not in record.path:
                return
            self._arrived.notify_all()
            while self._held is held:
                open_ = sum(1 for r in self.requests if r.end is None and held[1] in r.path)
                if open_ >= held[0]:
                    self._held = None
                    self._arrived.notify_all()
                    return
                if not self._arrived.wait(held[2]):  # no new request for that long: let it go, the hold stays
                    return

    def reset(self):
        """Forget the requests logged so far."""
        with self._lock:
            self.requests.clear()

    def begin(self, method: str, path: str, range_: Optional[str], host: str) -> Request:
        """Log a request's start; ``finish`` logs its end."""
        with self._lock:
            if self.rate and (self._bucket is None or self._bucket.rate != self.rate):
                self._bucket = TokenBucket(self.rate)
            record = Request(method, path, range_, start=next(self._events), host=host, began=time.monotonic())
            self.requests.append(record)
        return record

    def finish(self, record: Request):
        with self._lock:
            record.end, record.finished = next(self._events), time.monotonic()

    def take(self, size: int):
        """Wait for ``size`` bytes' turn on the capped link (none without ``rate``)."""
        bucket = self._bucket
        if self.rate and bucket is not None:
            bucket.take(size)

    def sent(self, pattern: str = "") -> int:
        """Body bytes sent for requests whose path contains ``pattern``."""
        return sum(request.sent for request in self.requests if pattern in request.path)

    def gets(self, pattern: str = "") -> list:
        """The GET requests whose path contains ``pattern``."""
        return [request for request in self.requests if request.method == "GET" and pattern in request.path]

    def max_in_flight(self, pattern: str = "", method: str = "GET") -> int:
        """The most requests (whose path contains ``pattern``) open at once, from the log's order of starts and
        ends: a request counts from its start to its end as the server logged them."""
        events = []
        for request in self.requests:
            if request.method == method and pattern in request.path:
                events += [(request.start, 1), (request.end if request.end is not None else math.inf, -1)]
        most = open_ = 0
        for _, step in sorted(events):
            open_ += step
            most = max(most, open_)
        return most

    def mean_in_flight(self, pattern: str = "", method: str = "GET") -> float:
        """Requests open on average while any was (their durations over the span from the first start to the last
        end): the bench's figure, from the times the server logged."""
        chosen = [r for r in self.requests if r.method == method and pattern in r.path and r.end is not None]
        if not chosen:
            return 0.0
        span = max(r.finished for r in chosen) - min(r.began for r in chosen)
        return sum(r.finished - r.began for r in chosen) / span if span > 0 else float(len(chosen))

    def etag_of(self, path: Path, ranged: bool) -> str:
        """The ETag an answer carries, as ``etag_mode`` says."""
        tag = etag(path)
        if self.etag_mode == "per-answer":
            return f'"{tag.strip(chr(34))}-{next(self._answers)}"'
        if self.etag_mode == "weak-ranges" and ranged:
            return "W/" + tag
        return tag

    def cdn_path(self, repo_id: str, relative: str) -> str:
        """The signed URL the Hub's resolve redirects to (valid until ``expire_cdn``)."""
        return f"{self.cdn_url}/cdn/{self._generation}/{repo_id}/{urllib.parse.quote(relative)}"


def etag(path: Path) -> str:
    """What the server says of a file's version: changes with its size or modification time (as nginx does)."""
    status = path.stat()
    return f'"{status.st_size:x}-{status.st_mtime_ns:x}"'


def _handler(server: RangeServer, host: str):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, as real servers send them

        def log_message(self, *args):  # quiet: the requests are logged in server.requests
            pass

        def do_HEAD(self):
            self._logged(lambda: self._route(body=False))

        def do_GET(self):
            self._logged(lambda: self._route(body=True))

        def do_POST(self):
            self._logged(self._post)

        def _logged(self, answer):
            self.record = server.begin(self.command, self.path, self.headers.get("Range"), host)
            try:
                server._wait_for_company(self.record)
                if server.delay:
                    time.sleep(server.delay)
                answer()
            finally:
                self._done()

        def _done(self):
            """Log the end, once: just before the answer's last bytes go out, so that a client that has them (and
            starts its next request) always finds this one ended; never after, which would count it open too long."""
            if self.record.end is None:
                server.finish(self.record)

        def _post(self):
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length).decode()
            match = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/paths-info/([^/?]+)", self._path())
            if not match or match.group(1) not in server.repos:
                return self._error(404, "RepoNotFound")
            if self.headers.get("Content-Type", "").startswith("application/json"):
                paths = json.loads(payload)["paths"]
            else:
                paths = urllib.parse.parse_qs(payload).get("paths", [])
            folder, _ = server.repos[match.group(1)]
            found = [_entry(folder, path) for path in paths if (folder / path).exists()]
            self._json(found)

        def _path(self) -> str:
            return urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)

        def _route(self, body: bool):
            path = self._path()
            if host == "cdn":
                match = re.fullmatch(r"/cdn/(\d+)/([^/]+/[^/]+)/(.+)", path)
                if not match or match.group(2) not in server.repos:
                    return self._error(404, None, body)
                if int(match.group(1)) != server._generation:
                    return self._error(403, None, body, b"<Error><Code>AccessDenied</Code>Request has expired</Error>")
                return self._file(server.repos[match.group(2)][0] / match.group(3), body)
            if path.startswith("/files/"):
                return self._file(server.root / path[len("/files/") :], body)
            match = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if match:
                if match.group(1) not in server.repos:
                    return self._error(404, "RepoNotFound", body)
                folder, sha = server.repos[match.group(1)]
                if server.cdn and (folder / match.group(3)).is_file():
                    return self._redirect(folder / match.group(3), match.group(1), match.group(3), sha)
                return self._file(folder / match.group(3), body, hub=True, commit=sha)
            match = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
            if match:
                if match.group(1) not in server.repos:
                    return self._error(404, "RepoNotFound", body)
                folder, sha = server.repos[match.group(1)]
                files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
                return self._json({"id": match.group(1), "sha": sha, "siblings": [{"rfilename": f} for f in files]})
            match = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", path)
            if match:
                if match.group(1) not in server.repos:
                    return self._error(404, "RepoNotFound", body)
                folder = server.repos[match.group(1)][0]
                where = folder / (match.group(3) or "")
                if not where.is_dir():
                    return self._error(404, "EntryNotFound", body)
                recursive = "recursive=true" in (urllib.parse.urlsplit(self.path).query or "").lower()
                children = sorted(where.rglob("*") if recursive else where.iterdir())
                return self._json([_entry(folder, str(child.relative_to(folder))) for child in children])
            self._error(404, None, body)

        def _redirect(self, path: Path, repo_id: str, relative: str, sha: str):
            """The Hub's answer for a file in LFS: where to download it, and what it is."""
            entry = _entry(path.parent, path.name)
            self.record.status = 302
            self.send_response(302)
            self.send_header("Location", server.cdn_path(repo_id, relative))
            self.send_header("X-Repo-Commit", sha)
            self.send_header("X-Linked-Etag", f'"{entry["lfs"]["oid"]}"')
            self.send_header("X-Linked-Size", str(entry["size"]))
            self.send_header("ETag", f'"{entry["oid"]}"')
            self.send_header("Content-Length", "0")
            self._done()
            self.end_headers()

        def _json(self, value):
            data = json.dumps(value).encode()
            self.record.status = 200
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self._done()
            self.end_headers()
            self._write(data)

        def _error(self, status: int, code: Optional[str], body: bool = True, data: bytes = b'{"error": "not found"}'):
            data = data if body else b""
            self.record.status = status
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self._done()
            self.end_headers()
            self._write(data)

        def _file(self, path: Path, body: bool, hub: bool = False, commit: Optional[str] = None):
            if not path.is_file():
                return self._error(404, "EntryNotFound" if hub else None, body)
            size = path.stat().st_size
            start, end, status = 0, size, 200
            wanted = self.headers.get("Range")
            if wanted and server.ranges:
                if server.redirect_loop and host == "hub":
                    self.record.status = 302
                    self.send_response(302)
                    self.send_header("Location", self.path)
                    self.send_header("Content-Length", "0")
                    self._done()
                    return self.end_headers()
                match = _RANGE.match(wanted.strip())
                if match and match.group(1):
                    start = int(match.group(1))
                    end = min(size, int(match.group(2)) + 1) if match.group(2) else size
                elif match and match.group(2):
                    start, end = max(0, size - int(match.group(2))), size
                if not match or start >= size or start >= end:
                    self.record.status = 416
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self._done()
                    return self.end_headers()
                if server.range_end_ignored:
                    end = size
                status = 206
            self.record.status = status
            self.send_response(status)
            self.send_header("Content-Length", str(end - start))
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("ETag", server.etag_of(path, status == 206))
            if commit:
                self.send_header("X-Repo-Commit", commit)
            if server.ranges:
                self.send_header("Accept-Ranges", "bytes")
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
            if not body or end == start:
                self._done()
            self.end_headers()
            if not body:
                return
            limit = end - start
            if status == 206 and server.stall_after is not None:
                limit = min(limit, server.stall_after)
            if server.cut_after is not None:
                limit = min(limit, server.cut_after)
            with open(path, "rb") as source:
                source.seek(start)
                try:
                    while self.record.sent < limit:
                        chunk = source.read(min(_CHUNK, limit - self.record.sent))
                        server.take(len(chunk))
                        self.record.sent += len(chunk)  # counted as it goes out (a chunk cut short counts whole)
                        if self.record.sent == end - start:
                            self._done()  # the whole answer's last chunk
                        self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client stopped reading
                    return
            if self.record.sent < end - start:
                self.wfile.flush()
                if server.stall_after is not None:
                    self._stall()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def _stall(self):
            """Send nothing more until the client hangs up (or the server stops)."""
            while not server._closing.is_set():
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable:
                    try:
                        if not self.connection.recv(1, socket.MSG_PEEK):
                            return
                    except OSError:
                        return

        def _write(self, data: bytes):
            try:
                if data:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    return Handler


def _entry(folder: Path, relative: str) -> dict:
    """A tree / paths-info entry as the Hub gives it (a file's oid changes with its version)."""
    path = folder / relative
    if path.is_dir():
        return {"type": "directory", "oid": hashlib.sha1(relative.encode()).hexdigest(), "path": relative}
    oid = hashlib.sha1(etag(path).encode()).hexdigest()
    size = path.stat().st_size
    return {
        "type": "file",
        "oid": oid,
        "size": size,
        "path": relative,
        "lfs": {"oid": oid * 2, "size": size, "pointerSize": 134},
    }


# --- split zips with zip64 end records -------------------------------------------------------------------------


def zip64_bytes(members) -> bytes:
    """A stored zip of ``(name, bytes)`` members whose end is the zip64 one (zip64 end record and locator, the
    classic end record's counts and offsets saturated), as zip tools write it for archives like M2KR's; members
    carry a zip64 extra field in their local headers (``force_zip64``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members:
            with archive.open(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), "w", force_zip64=True) as out:
                out.write(data)
    data = buffer.getvalue()
    end = data.rfind(b"PK\x05\x06")
    (_, disk, disk_start, count_disk, count, cd_size, cd_offset, comment) = struct.unpack(
        "<4s4H2LH", data[end : end + 22]
    )
    if data[end - 20 : end - 16] == b"PK\x06\x07":
        return data  # zipfile already wrote zip64 end records (65,536 members or more)
    zip64_end = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count_disk, count, cd_size, cd_offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    classic = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:end] + zip64_end + locator + classic


def split_zip(folder, members, parts=("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003")) -> list:
    """Write ``zip64_bytes(members)`` into ``folder`` split at byte level like ``split -n``; returns the paths."""
    data = zip64_bytes(members)
    size = -(-len(data) // len(parts))
    paths = []
    for index, part in enumerate(parts):
        path = Path(folder) / part
        path.write_bytes(data[index * size : (index + 1) * size])
        paths.append(path)
    return paths


def member_spans(members) -> dict:
    """Each member's span in the unsplit zip (local header, data, and any descriptor): ``{name: (start, end)}``."""
    data = zip64_bytes(members)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = sorted(archive.infolist(), key=lambda info: info.header_offset)
        ends = [info.header_offset for info in infos[1:]] + [archive.start_dir]
        return {info.filename: (info.header_offset, end) for info, end in zip(infos, ends)}


def environ_endpoint(url: str) -> dict:
    """The environment that points huggingface_hub at ``url`` (set before it is imported)."""
    return {**os.environ, "HF_ENDPOINT": url, "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0"}
