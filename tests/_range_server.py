"""A real HTTP server on 127.0.0.1 for tests and benchmarks that read data remotely, counting what it sends.

- ``/files/<path>``: the files of a folder, with single-range ``Range`` support (206, ``Content-Range``), ``ETag``,
  ``Content-Length``, ``HEAD``; 404 for anything else. ``ranges = False`` makes it a server without Range support
  (every GET is a 200 of the whole file, and no ``Accept-Ranges``).
- The Hub routes ``huggingface_hub``'s ``HfFileSystem`` uses (read from huggingface_hub 2.4's ``hf_api.py`` and
  ``hf_file_system.py``), for the repos added with ``add_repo``, under ``HF_ENDPOINT`` = ``server.url``:
  ``GET /api/datasets/{repo}[/revision/{rev}]`` (repo_info), ``GET /api/datasets/{repo}/tree/{rev}[/{path}]``
  (list_repo_tree), ``POST /api/datasets/{repo}/paths-info/{rev}`` (get_paths_info) and
  ``GET|HEAD /datasets/{repo}/resolve/{rev}/{path}`` (the files, with Range as above).

Every request is logged (``server.requests``: method, path, Range header, status, body bytes actually sent), so a
test asserts requests and bytes moved. Also ``split_zip``: a zip with zip64 end records split at byte level.
"""

import hashlib
import http.server
import io
import json
import os
import re
import struct
import threading
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
    status: int
    sent: int  # body bytes written to the socket


class RangeServer:
    """A threaded HTTP server over ``root`` (``/files/...``) and Hub repos; ``with RangeServer(root) as server``."""

    def __init__(self, root, ranges: bool = True):
        self.root = Path(root)
        self.ranges = ranges
        self.repos = {}  # repo id -> (folder, commit sha)
        self.requests = []
        self._lock = threading.Lock()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()

    def file_url(self, relative: str) -> str:
        """The URL of ``root/relative``."""
        return f"{self.url}/files/{relative}"

    def add_repo(self, repo_id: str, folder) -> str:
        """Serve ``folder`` as dataset repo ``repo_id``; returns its (fake, stable) commit sha."""
        sha = hashlib.sha1(repo_id.encode()).hexdigest()
        self.repos[repo_id] = (Path(folder), sha)
        return sha

    def reset(self):
        """Forget the requests logged so far."""
        with self._lock:
            self.requests.clear()

    def log(self, request: Request):
        with self._lock:
            self.requests.append(request)

    def sent(self, pattern: str = "") -> int:
        """Body bytes sent for requests whose path contains ``pattern``."""
        return sum(request.sent for request in self.requests if pattern in request.path)

    def gets(self, pattern: str = "") -> list:
        """The GET requests whose path contains ``pattern``."""
        return [request for request in self.requests if request.method == "GET" and pattern in request.path]


def etag(path: Path) -> str:
    """What the server says of a file's version: changes with its size or modification time (as nginx does)."""
    status = path.stat()
    return f'"{status.st_size:x}-{status.st_mtime_ns:x}"'


def _handler(server: RangeServer):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once, as real servers send them

        def log_message(self, *args):  # quiet: the requests are logged in server.requests
            pass

        def do_HEAD(self):
            self._route(body=False)

        def do_GET(self):
            self._route(body=True)

        def do_POST(self):
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
            self._json(found, "POST")

        def _path(self) -> str:
            return urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)

        def _route(self, body: bool):
            path = self._path()
            if path.startswith("/files/"):
                return self._file(server.root / path[len("/files/") :], body)
            match = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if match:
                if match.group(1) not in server.repos:
                    return self._error(404, "RepoNotFound", body)
                return self._file(server.repos[match.group(1)][0] / match.group(3), body, hub=True)
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

        def _json(self, value, method="GET"):
            data = json.dumps(value).encode()
            server.log(Request(method, self.path, None, 200, len(data)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._write(data)

        def _error(self, status: int, code: Optional[str], body: bool = True):
            data = b'{"error": "not found"}' if body else b""
            server.log(Request(self.command, self.path, self.headers.get("Range"), status, len(data)))
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._write(data)

        def _file(self, path: Path, body: bool, hub: bool = False):
            if not path.is_file():
                return self._error(404, "EntryNotFound" if hub else None, body)
            size = path.stat().st_size
            start, end, status = 0, size, 200
            wanted = self.headers.get("Range")
            if wanted and server.ranges:
                match = _RANGE.match(wanted.strip())
                if match and match.group(1):
                    start = int(match.group(1))
                    end = min(size, int(match.group(2)) + 1) if match.group(2) else size
                elif match and match.group(2):
                    start, end = max(0, size - int(match.group(2))), size
                if not match or start >= size or start >= end:
                    server.log(Request(self.command, self.path, wanted, 416, 0))
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    return self.end_headers()
                status = 206
            record = Request(self.command, self.path, wanted, status, 0)
            server.log(record)  # before the response: a client that has it finds it logged
            self.send_response(status)
            self.send_header("Content-Length", str(end - start))
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("ETag", etag(path))
            if server.ranges:
                self.send_header("Accept-Ranges", "bytes")
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
            self.end_headers()
            if body:
                with open(path, "rb") as source:
                    source.seek(start)
                    try:
                        while record.sent < end - start:
                            chunk = source.read(min(_CHUNK, end - start - record.sent))
                            record.sent += len(chunk)  # counted as it goes out (a chunk cut short counts whole)
                            self.wfile.write(chunk)
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True  # the client stopped reading

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
