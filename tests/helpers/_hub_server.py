"""A writable Hub on 127.0.0.1 that ``huggingface_hub``'s own client talks to: repos with a commit history, files as
git blobs (their ids are git blob SHA-1s, as the Hub lists them) or LFS objects (stored by sha256, the git blob then
the LFS pointer), and pull requests.

The routes are those ``HfApi`` calls (read from huggingface_hub 2.4's ``hf_api.py``, ``_commit_api.py``, ``lfs.py``
and ``file_download.py``):

- ``POST /api/repos/create`` (create_repo; 409 with the repo's url when it exists);
- ``GET /api/{type}s/{repo}[/revision/{rev}]`` (repo_info: ``sha``, ``siblings``);
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]`` (list_repo_tree: ``oid`` the blob id, ``lfs.oid`` the sha256);
- ``POST /api/{type}s/{repo}/preupload/{rev}`` (upload modes: LFS where ``.gitattributes`` says ``filter=lfs``, or
  for a binary sample or 10 MB or more, as the Hub decides; ``oid`` of the file there now);
- ``POST /{prefix}{repo}.git/info/lfs/objects/batch``, ``PUT /lfs/{sha256}``, ``POST /lfs/verify`` (LFS basic
  transfer: the bytes are checked against their sha256);
- ``POST /api/validate-yaml`` (a README's YAML header; 400 with the parser's words when it does not parse);
- ``POST /api/{type}s/{repo}/commit/{rev}[?create_pr=1]`` (the NDJSON commit: ``file``, ``lfsFile``,
  ``deletedFile``, ``deletedFolder``; ``parentCommit`` checked, 412 when the branch moved; deleting a file that is
  not there is a 404, as on the Hub);
- ``GET|HEAD /{prefix}{repo}/resolve/{rev}/{path}`` (hf_hub_download: ``X-Repo-Commit``, ``ETag``);
- ``GET /api/{type}s/{repo}/discussions[/{num}]`` (pull requests: get_repo_discussions, get_discussion_details).

Revisions are ``main``, a commit id, or ``refs/pr/N``. Xet is not spoken: the ``hub`` fixture sets
``HF_HUB_DISABLE_XET``, so the client uploads LFS files as it does without ``hf_xet``.

Tests read the state through the Python API (``server.repo(repo_id, repo_type)``: ``files()``, ``tree()``,
``commits``, ``pull_requests``; ``server.lfs`` and ``server.blobs``: what is stored) and change it as a person on the
website would (``repo.commit_as_user({path: bytes or None}, message)``). Every request is logged
(``server.requests``: method, path, status).
"""

import base64
import fnmatch
import hashlib
import http.server
import json
import re
import threading
import urllib.parse
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from datetime import timezone
from typing import Optional

import yaml

LFS_THRESHOLD = 10 * 1024 * 1024  # the Hub stores a file this large in LFS whatever .gitattributes says
# The Hub's first commit of a new repo: a .gitattributes routing binary data files to LFS (a subset of its list)
DEFAULT_GITATTRIBUTES = b"".join(
    f"{pattern} filter=lfs diff=lfs merge=lfs -text\n".encode()
    for pattern in ("*.parquet", "*.arrow", "*.bin", "*.safetensors", "*.zip", "*.jpg", "*.png", "*.pdf")
)
PREFIXES = {"model": "", "dataset": "datasets/", "space": "spaces/"}
_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}


def git_blob_id(data: bytes) -> str:
    """The id git (and so the Hub's tree listing) gives a blob: SHA-1 of ``blob <size>\\0`` and the bytes."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The pointer git keeps for an LFS file (git-lfs' spec v1), whose blob id the tree lists."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass(frozen=True)
class File:
    """One file of a commit's tree: its git blob id and size, and its sha256 when it is stored in LFS."""

    blob_id: str
    size: int
    sha256: Optional[str] = None  # None: a regular git blob


@dataclass
class Commit:
    """One commit: its id, parent, message and whole tree (path -> File)."""

    oid: str
    parent: Optional[str]
    message: str
    tree: dict
    operations: list = field(default_factory=list)  # what the commit did: ("add"|"delete", path)
    description: str = ""
    token: Optional[str] = None  # the token the commit was sent with (None: made on the website)


@dataclass
class PullRequest:
    """A pull request: its number, title, the commit its ref points at, and its status."""

    num: int
    title: str
    head: str  # commit id of refs/pr/<num>
    base: str = "main"
    status: str = "open"
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


class Repo:
    """One repo on the server: its branch ``main``, commits, pull requests; reads go through ``server``'s stores."""

    def __init__(self, server: "HubServer", repo_id: str, repo_type: str, private: bool = False):
        self.server, self.repo_id, self.repo_type, self.private = server, repo_id, repo_type, private
        self.commits = []  # in order; commits[0] is the repo's creation
        self.branches = {}
        self.pull_requests = []
        first = {".gitattributes": server.store(DEFAULT_GITATTRIBUTES, lfs=False)}
        self.branches["main"] = self._commit(first, "initial commit", None, [("add", ".gitattributes")])

    # --- reading ---------------------------------------------------------------------------------------------

    def resolve(self, revision: str = "main") -> Optional[Commit]:
        """The commit a revision names (a branch, ``refs/pr/N``, a commit id); None when it names none."""
        match = re.fullmatch(r"refs/pr/(\d+)", revision)
        if match:
            prs = [pr for pr in self.pull_requests if pr.num == int(match.group(1))]
            oid = prs[0].head if prs else None
        else:
            oid = self.branches.get(revision, revision)
        return next((commit for commit in self.commits if commit.oid == oid), None)

    def tree(self, revision: str = "main") -> dict:
        """path -> File at ``revision``."""
        return dict(self.resolve(revision).tree)

    def files(self, revision: str = "main") -> dict:
        """path -> bytes at ``revision``."""
        return {path: self.server.content(entry) for path, entry in self.tree(revision).items()}

    @property
    def head(self) -> str:
        """The commit id of ``main``."""
        return self.branches["main"]

    # --- writing ---------------------------------------------------------------------------------------------

    def commit_as_user(self, changes: dict, message: str = "edited on the website") -> str:
        """A commit a person makes on the Hub's website: ``{path: bytes}`` written (LFS where the Hub would store
        it), ``{path: None}`` deleted; returns the commit id."""
        with self.server.lock:
            tree = self.tree()
            for path, data in changes.items():
                if data is None:
                    del tree[path]
                else:
                    tree[path] = self.server.store(data, self.stores_in_lfs(path, data, tree))
            operations = [("add" if data is not None else "delete", path) for path, data in changes.items()]
            self.branches["main"] = self._commit(tree, message, self.head, operations)
            return self.head

    def stores_in_lfs(self, path: str, sample: bytes, tree: Optional[dict] = None, size: Optional[int] = None) -> bool:
        """Whether the Hub stores ``path`` in LFS: its .gitattributes says so, or it is large or binary."""
        tree = self.tree() if tree is None else tree
        attributes = self.server.content(tree[".gitattributes"]).decode() if ".gitattributes" in tree else ""
        for line in attributes.splitlines():
            parts = line.split()
            if len(parts) > 1 and "filter=lfs" in parts[1:]:
                pattern = parts[0]
                if fnmatch.fnmatchcase(path.rsplit("/", 1)[-1] if "/" not in pattern else path, pattern):
                    return True
        return (len(sample) if size is None else size) >= LFS_THRESHOLD or b"\x00" in sample[:512]

    def _commit(self, tree: dict, message: str, parent: Optional[str], operations=(), **sent) -> str:
        """Record a commit of ``tree`` on ``parent`` (``sent``: its description and token); moving a branch or a pull
        request's ref is the caller's."""
        seed = [self.repo_id, len(self.commits), parent, message, sorted((p, f.blob_id) for p, f in tree.items())]
        oid = hashlib.sha1(json.dumps(seed).encode()).hexdigest()
        self.commits.append(Commit(oid, parent, message, dict(tree), list(operations), **sent))
        return oid

    def pull_request_files(self, num: int) -> dict:
        """path -> bytes of what pull request ``num`` adds or changes against the commit it was opened on."""
        head = self.resolve(f"refs/pr/{num}")
        base = self.resolve(head.parent).tree if head.parent else {}
        return {path: self.server.content(entry) for path, entry in head.tree.items() if base.get(path) != entry}


class HubServer:
    """A threaded HTTP server speaking the Hub routes above; ``with HubServer() as server``. ``tokens`` (token -> user
    name): given, a commit is refused (401) unless it comes with one of them, and ``/api/whoami-v2`` (gradio's
    local sign-in asks it) names the token's user."""

    def __init__(self, tokens=None):
        self.tokens = None if tokens is None else dict(tokens)
        self.repos = {}  # (repo_type, repo_id) -> Repo
        self.blobs = {}  # git blob id -> bytes (regular files, LFS pointers)
        self.lfs = {}  # sha256 -> bytes
        self.requests = []  # (method, path, status)
        self.lock = threading.RLock()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()

    def create_repo(self, repo_id: str, repo_type: str = "dataset", private: bool = False) -> Repo:
        """A new repo holding the Hub's first commit (its .gitattributes)."""
        with self.lock:
            repo = self.repos[repo_type, repo_id] = Repo(self, repo_id, repo_type, private)
            return repo

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        """The repo (KeyError when it does not exist)."""
        return self.repos[repo_type, repo_id]

    def store(self, data: bytes, lfs: bool) -> File:
        """Keep ``data`` as the Hub would: a git blob, or an LFS object and its pointer blob."""
        if not lfs:
            self.blobs[git_blob_id(data)] = data
            return File(git_blob_id(data), len(data))
        sha256 = hashlib.sha256(data).hexdigest()
        self.lfs[sha256] = data
        pointer = lfs_pointer(sha256, len(data))
        self.blobs[git_blob_id(pointer)] = pointer
        return File(git_blob_id(pointer), len(data), sha256)

    def content(self, entry: File) -> bytes:
        """A file's bytes (an LFS file's object, not its pointer)."""
        return self.lfs[entry.sha256] if entry.sha256 else self.blobs[entry.blob_id]

    def url_of(self, repo: Repo) -> str:
        return f"{self.url}/{PREFIXES[repo.repo_type]}{repo.repo_id}"

    def log(self, method: str, path: str, status: int):
        with self.lock:
            self.requests.append((method, path, status))

    def calls(self, method: str, pattern: str = "") -> list:
        """The paths of the ``method`` requests whose path contains ``pattern``."""
        return [path for verb, path, _ in self.requests if verb == method and pattern in path]


class HubError(Exception):
    """An error answer: status, the Hub's X-Error-Code (which huggingface_hub turns into its own error types)."""

    def __init__(self, status: int, message: str, code: Optional[str] = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def _handler(server: HubServer):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: requests are logged in server.requests
            pass

        def do_GET(self):
            self._dispatch(body=True)

        def do_HEAD(self):
            self._dispatch(body=False)

        def do_POST(self):
            self._dispatch(body=True)

        def do_PUT(self):
            self._dispatch(body=True)

        # --- plumbing ---------------------------------------------------------------------------------------

        def _dispatch(self, body: bool):
            split = urllib.parse.urlsplit(self.path)
            self.query = urllib.parse.parse_qs(split.query)
            self.raw_path, self.body = split.path, body
            length = int(self.headers.get("Content-Length") or 0)
            self.payload = self.rfile.read(length) if length else b""
            try:
                with server.lock:
                    status, headers, data = self._route()
            except HubError as err:
                status, data = err.status, json.dumps({"error": err.message}).encode()
                headers = {"X-Error-Message": err.message, **({"X-Error-Code": err.code} if err.code else {})}
            if isinstance(data, (dict, list)):
                data = json.dumps(data).encode()
                headers = {"Content-Type": "application/json", **headers}
            server.log(self.command, urllib.parse.unquote(self.raw_path), status)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.body and data:
                self.wfile.write(data)

        def _json_payload(self):
            return json.loads(self.payload.decode() or "null")

        def _repo(self, kind: str, repo_id: str) -> Repo:
            key = (_TYPES.get(kind, kind), repo_id)
            if key not in server.repos:
                raise HubError(404, f"Repository {repo_id} not found", "RepoNotFound")
            return server.repos[key]

        def _commit_of(self, repo: Repo, revision: str) -> Commit:
            commit = repo.resolve(revision)
            if commit is None:
                raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            return commit

        def _route(self):
            path, method = self.raw_path, self.command
            routes = [
                ("POST", r"/api/repos/create", self._create),
                ("GET", r"/api/whoami-v2", self._whoami),
                ("POST", r"/api/validate-yaml", self._validate_yaml),
                ("GET", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/revision/([^/]+))?", self._info),
                ("GET", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", self._tree),
                ("POST", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/preupload/([^/]+)", self._preupload),
                ("POST", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/commit/([^/]+)", self._commit),
                ("GET", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/discussions", self._discussions),
                ("GET", r"/api/(models|datasets|spaces)/([^/]+/[^/]+)/discussions/(\d+)", self._discussion),
                ("POST", r"/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch", self._lfs_batch),
                ("PUT", r"/lfs/([0-9a-f]{64})", self._lfs_put),
                ("POST", r"/lfs/verify", self._lfs_verify),
                ("GET", r"/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self._resolve),
            ]
            for verb, pattern, handle in routes:
                match = re.fullmatch(pattern, path)
                if match and (verb == method or (verb, method) == ("GET", "HEAD")):
                    return handle(*[urllib.parse.unquote(g) if g else g for g in match.groups()])
            raise HubError(404, f"no route {method} {path}")

        def _token(self) -> Optional[str]:
            header = self.headers.get("Authorization", "")
            return header[len("Bearer ") :] if header.startswith("Bearer ") else None

        def _check_token(self) -> None:
            if server.tokens is not None and self._token() not in server.tokens:
                raise HubError(401, "Invalid credentials in Authorization header")

        def _whoami(self):
            self._check_token()
            user = (server.tokens or {}).get(self._token(), "user")
            return 200, {}, {"type": "user", "name": user, "fullname": user.title(), "avatarUrl": "/a.png", "orgs": []}

        # --- repos --------------------------------------------------------------------------------------------

        def _create(self):
            payload = self._json_payload()
            repo_id = f"{payload['organization']}/{payload['name']}"
            repo_type = payload.get("type") or "model"
            if (repo_type, repo_id) in server.repos:
                repo = server.repos[repo_type, repo_id]
                return 409, {}, {"error": "You already created this repo", "url": server.url_of(repo)}
            repo = server.create_repo(repo_id, repo_type, private=payload.get("visibility") == "private")
            return 200, {}, {"url": server.url_of(repo), "name": repo_id}

        def _info(self, kind, repo_id, revision):
            repo = self._repo(kind, repo_id)
            commit = self._commit_of(repo, revision or "main")
            siblings = [{"rfilename": path} for path in sorted(commit.tree)]
            return 200, {}, {"id": repo_id, "sha": commit.oid, "private": repo.private, "siblings": siblings}

        def _tree(self, kind, repo_id, revision, folder):
            repo = self._repo(kind, repo_id)
            tree = self._commit_of(repo, revision).tree
            prefix = f"{folder.rstrip('/')}/" if folder else ""
            recursive = self.query.get("recursive", ["false"])[0].lower() == "true"
            below = sorted(path for path in tree if path.startswith(prefix))
            if folder and not below:
                raise HubError(404, f"{folder} does not exist", "EntryNotFound")
            entries, folders = [], set()
            for path in below:
                rest = path[len(prefix) :].split("/")
                for depth in range(1, len(rest)):
                    name = prefix + "/".join(rest[:depth])
                    if (recursive or depth == 1) and name not in folders:
                        folders.add(name)
                        entries.append(
                            {
                                "type": "directory",
                                "oid": hashlib.sha1(name.encode()).hexdigest(),
                                "size": 0,
                                "path": name,
                            }
                        )
                if recursive or len(rest) == 1:
                    entries.append(_file_entry(path, tree[path]))
            return 200, {}, sorted(entries, key=lambda entry: entry["path"])

        # --- uploads and commits ------------------------------------------------------------------------------

        def _preupload(self, kind, repo_id, revision):
            repo = self._repo(kind, repo_id)
            tree = self._commit_of(repo, revision).tree
            files = []
            for item in self._json_payload()["files"]:
                sample = base64.b64decode(item["sample"])
                lfs = repo.stores_in_lfs(item["path"], sample, tree, size=item["size"])
                now = tree.get(item["path"])
                oid = None if now is None else (now.sha256 or now.blob_id)
                files.append(
                    {"path": item["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid}
                )
            return 200, {}, {"files": files}

        def _lfs_batch(self, prefix, repo_id):
            self._repo((prefix or "models/").rstrip("/"), repo_id)
            objects = []
            for item in self._json_payload()["objects"]:
                entry = {"oid": item["oid"], "size": item["size"]}
                if item["oid"] not in server.lfs:
                    entry["actions"] = {
                        "upload": {"href": f"{server.url}/lfs/{item['oid']}"},
                        "verify": {"href": f"{server.url}/lfs/verify"},
                    }
                objects.append(entry)
            return 200, {}, {"transfer": "basic", "objects": objects}

        def _lfs_put(self, sha256):
            if hashlib.sha256(self.payload).hexdigest() != sha256:
                raise HubError(400, f"the bytes sent do not hash to {sha256}")
            server.lfs[sha256] = self.payload
            return 200, {}, b""

        def _lfs_verify(self):
            payload = self._json_payload()
            stored = server.lfs.get(payload["oid"])
            if stored is None or len(stored) != payload["size"]:
                raise HubError(404, f"LFS object {payload['oid']} not found")
            return 200, {}, {}

        def _validate_yaml(self):
            content = self._json_payload()["content"]
            match = re.match(r"---\n(.*?)\n---", content, re.DOTALL)
            try:
                yaml.safe_load(match.group(1)) if match else None
            except yaml.YAMLError as err:
                return 400, {"X-Error-Message": "Invalid metadata"}, {"errors": [{"message": str(err)}]}
            return 200, {}, {"errors": [], "warnings": []}

        def _commit(self, kind, repo_id, revision):
            repo = self._repo(kind, repo_id)
            self._check_token()
            base = self._commit_of(repo, revision)
            lines = [json.loads(line) for line in self.payload.decode().splitlines() if line.strip()]
            header = lines[0]["value"]
            parent = header.get("parentCommit")
            if parent is not None and parent != base.oid:
                raise HubError(
                    412, f"A commit has happened since {parent}: the parent commit is not the head of {revision}"
                )
            tree, operations = dict(base.tree), []
            for line in lines[1:]:
                key, value = line["key"], line["value"]
                path = value["path"]
                if key == "file":
                    tree[path] = server.store(base64.b64decode(value["content"]), lfs=False)
                elif key == "lfsFile":
                    data = server.lfs.get(value["oid"])
                    if data is None:
                        raise HubError(422, f"{path}: LFS object {value['oid']} was never uploaded")
                    tree[path] = server.store(data, lfs=True)
                elif key == "deletedFile":
                    if path not in tree:
                        raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                    del tree[path]
                elif key == "deletedFolder":
                    gone = [name for name in tree if name.startswith(path.rstrip("/") + "/")]
                    if not gone:
                        raise HubError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
                    for name in gone:
                        del tree[name]
                else:
                    raise HubError(400, f"unknown commit operation {key}")
                operations.append(("delete" if key.startswith("deleted") else "add", path))
            for path in tree:  # git holds no file where a folder is
                parents = ["/".join(path.split("/")[:depth]) for depth in range(1, path.count("/") + 1)]
                clash = next((parent for parent in parents if parent in tree), None)
                if clash is not None:
                    raise HubError(400, f"{path}: {clash} is a file, not a folder")
            sent = {"description": header.get("description") or "", "token": self._token()}
            oid = repo._commit(tree, header["summary"], base.oid, operations, **sent)
            answer = {"commitOid": oid, "commitUrl": f"{server.url_of(repo)}/commit/{oid}"}
            if self.query.get("create_pr", ["0"])[0] == "1":
                number = len(repo.pull_requests) + 1
                repo.pull_requests.append(PullRequest(number, header["summary"], oid))
                answer["pullRequestUrl"] = f"{server.url_of(repo)}/discussions/{number}"
            elif revision in repo.branches:
                repo.branches[revision] = oid
            elif re.fullmatch(r"refs/pr/\d+", revision):
                next(pr for pr in repo.pull_requests if f"refs/pr/{pr.num}" == revision).head = oid
            else:
                raise HubError(400, f"{revision} is not a branch: commits go to a branch or a pull request")
            return 200, {}, answer

        # --- reads ----------------------------------------------------------------------------------------------

        def _resolve(self, prefix, repo_id, revision, path):
            repo = self._repo((prefix or "models/").rstrip("/"), repo_id)
            commit = self._commit_of(repo, revision)
            entry = commit.tree.get(path)
            if entry is None:
                raise HubError(404, f"{path} does not exist at {revision}", "EntryNotFound")
            headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{entry.sha256 or entry.blob_id}"'}
            return 200, {"Content-Type": "application/octet-stream", **headers}, server.content(entry)

        def _discussions(self, kind, repo_id):
            repo = self._repo(kind, repo_id)
            found = [_discussion_entry(repo, pr) for pr in repo.pull_requests]
            return 200, {}, {"discussions": found, "count": len(found), "start": 0, "numClosedDiscussions": 0}

        def _discussion(self, kind, repo_id, num):
            repo = self._repo(kind, repo_id)
            prs = [pr for pr in repo.pull_requests if pr.num == int(num)]
            if not prs:
                raise HubError(404, f"Discussion {num} not found")
            entry = _discussion_entry(repo, prs[0])
            return (
                200,
                {},
                {**entry, "events": [], "changes": {"base": f"refs/heads/{prs[0].base}"}, "filesWithConflicts": []},
            )

    return Handler


def _file_entry(path: str, entry: File) -> dict:
    """A tree entry as the Hub lists a file: ``oid`` its git blob id, ``lfs`` its sha256 and pointer size."""
    found = {"type": "file", "oid": entry.blob_id, "size": entry.size, "path": path}
    if entry.sha256:
        found["lfs"] = {
            "oid": entry.sha256,
            "size": entry.size,
            "pointerSize": len(lfs_pointer(entry.sha256, entry.size)),
        }
    return found


def _discussion_entry(repo: Repo, pr: PullRequest) -> dict:
    return {
        "num": pr.num,
        "title": pr.title,
        "status": pr.status,
        "createdAt": pr.created_at,
        "isPullRequest": True,
        "author": {"name": "mmrhub-test"},
        "repo": {"name": repo.repo_id, "type": repo.repo_type},
    }
