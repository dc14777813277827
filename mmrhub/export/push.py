"""Publish a folder with ``huggingface_hub``: an exported dataset repo, or a metric folder as a Gradio Space.

The token comes from the environment (``HF_TOKEN``) or a saved ``hf auth login``, as ``HfApi`` reads it.
"""

import json
import sys
from dataclasses import dataclass
from dataclasses import field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Optional

from huggingface_hub import CommitOperationAdd
from huggingface_hub import CommitOperationDelete
from huggingface_hub import DatasetCard
from huggingface_hub import HfApi
from huggingface_hub import SpaceCard
from huggingface_hub import get_token
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils import get_session
from huggingface_hub.utils import validate_repo_id

REPO_TYPES = ("dataset", "space")
SPACE_SDK = "gradio"
# Caches, bytecode and hidden entries (a killed export's ``.<name>.partial-*`` folder, shard temp files) stay home.
IGNORE_PATTERNS = ["__pycache__/*", "*/__pycache__/*", "*.pyc", ".*", "*/.*"]
# What a push writes beside the files: their paths, so that a later push deletes those it does not upload again and
# no other file (a user's own files, whatever their names).
MANIFEST = ".mmrhub/manifest.json"
KEPT = {".gitattributes"}  # the Hub needs it; huggingface_hub never deletes it either


@dataclass
class Upload:
    """What ``push`` will send: the folder's files (relative POSIX path, size) to one repo, and the data files each
    config of its card reads (config name -> patterns), to flag a kept file that ``load_dataset`` would read."""

    folder: Path
    repo_id: str
    repo_type: str
    files: list
    configs: dict = field(default_factory=dict)


@dataclass
class Remote:
    """The repo before the push: its files, those its manifest says an earlier push of ours wrote, and whether it
    exists (``unknown``: why it could not be listed)."""

    files: list = field(default_factory=list)
    ours: set = field(default_factory=set)
    has_manifest: bool = False
    exists: bool = False
    unknown: Optional[str] = None


def _check_dataset(folder: Path, files: list, repo_id: str):
    if "README.md" not in files:
        raise ValueError(f"{folder} has no README.md: export it with `mmrhub export` first.")
    if not (DatasetCard.load(folder / "README.md").data.get("configs")):
        # without configs load_dataset guesses the layout from the file names: .txt files become one text split
        kind = "a trec_eval qrels export" if all(path.endswith(".txt") for path in files if path != "README.md") else ""
        raise ValueError(
            f"{folder} is {kind or 'a folder'} whose README.md has no `configs:`: load_dataset would read "
            f"{', '.join(path for path in files if path != 'README.md')} as one text split, not as judgments. Push "
            "the Parquet export instead (`mmrhub export BENCHMARK OUT`), whose qrels config holds the same judgments; "
            "share qrels files as they are, outside the Hub's dataset viewer."
        )
    scripts = [path for path in files if "/" not in path and path.endswith(".py")]
    if scripts:
        raise ValueError(
            f"{folder} holds {', '.join(scripts)} at its root: datasets >= 4 refuses dataset repos with a loading "
            f"script, so {repo_id} would not load. Push the `mmrhub export` folder (Parquet + README.md) instead."
        )


def _check_space(folder: Path, files: list):
    for required in ("README.md", "app.py"):
        if required not in files:
            raise ValueError(f"{folder} has no {required}: a metric Space needs README.md and app.py.")
    sdk = SpaceCard.load(folder / "README.md").data.get("sdk")
    if sdk != SPACE_SDK:
        raise ValueError(f"{folder}/README.md: the YAML header must say `sdk: {SPACE_SDK}` (found {sdk!r}).")


def _check_links(folder: Path, paths: list):
    # the upload reads through links: one leading out of the folder would publish a file from elsewhere.
    root = folder.resolve()
    for path in paths:
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            raise ValueError(
                f"{path} is a symbolic link to {path.resolve()}, outside {root}: pushing would upload a file from "
                "elsewhere. Replace the link with a copy of what it should publish, or remove it."
            )


def plan(folder, repo_id: str, repo_type: Optional[str] = None) -> Upload:
    """Check the folder and list its files. ``repo_type`` defaults to ``space`` for a metric folder (one with
    app.py or with ``<folder name>.py``, an ``evaluate`` module), else ``dataset``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder.")
    validate_repo_id(repo_id)
    if "/" not in repo_id:
        raise ValueError(f"Repo id {repo_id!r} must be org/name.")
    is_metric = (folder / "app.py").is_file() or (folder / f"{folder.resolve().name}.py").is_file()
    repo_type = repo_type or ("space" if is_metric else "dataset")
    if repo_type not in REPO_TYPES:
        raise ValueError(f"Unknown repo type {repo_type!r}; expected one of {', '.join(REPO_TYPES)}.")
    entries = {path.relative_to(folder).as_posix(): path for path in folder.rglob("*")}
    kept = sorted(filter_repo_objects(entries, ignore_patterns=IGNORE_PATTERNS))
    _check_links(folder, [entries[name] for name in kept])
    files = [name for name in kept if entries[name].is_file()]
    if repo_type == "dataset":
        _check_dataset(folder, files, repo_id)
    else:
        _check_space(folder, files)
    sized = [(path, (folder / path).stat().st_size) for path in files]
    configs = card_configs(folder) if repo_type == "dataset" else {}
    return Upload(folder=folder, repo_id=repo_id, repo_type=repo_type, files=sized, configs=configs)


def card_configs(folder: Path) -> dict:
    """Config name -> the data file patterns its card's ``configs:`` declares (``corpus/test-*``)."""
    found = {}
    for config in DatasetCard.load(folder / "README.md").data.get("configs") or []:
        entries = config.get("data_files") or []
        entries = entries if isinstance(entries, list) else [entries]
        paths = [entry.get("path") if isinstance(entry, dict) else entry for entry in entries]
        paths = [path for item in paths for path in (item if isinstance(item, list) else [item])]
        found[config.get("config_name", "default")] = [path for path in paths if isinstance(path, str)]
    return found


def describe(upload: Upload) -> str:
    """What an upload holds, a line per file."""
    total = sum(size for _, size in upload.files)
    lines = [f"{upload.repo_type} {upload.repo_id}: {len(upload.files)} file(s), {total:,} bytes from {upload.folder}"]
    lines += [f"  {size:>14,}  {path}" for path, size in upload.files]
    return "\n".join(lines)


def manifest(upload: Upload) -> bytes:
    """The manifest this push writes: every path it uploads, so that the next push deletes no other file."""
    return json.dumps(
        {
            "written_by": "mmrhub push",
            "about": "The files the last `mmrhub push` uploaded to this repo. The next push deletes those it does not "
            "upload again, and no other file.",
            "files": sorted(path for path, _ in upload.files),
        },
        indent=1,
    ).encode("utf-8")


def parse_manifest(data: bytes, where: str) -> set:
    """The paths a manifest lists; a manifest this program did not write is refused by name (nothing is deleted)."""
    try:
        files = json.loads(data.decode("utf-8")).get("files")
    except (UnicodeDecodeError, ValueError, AttributeError, RecursionError):
        files = None
    if not isinstance(files, list) or not all(isinstance(path, str) for path in files):
        raise ValueError(
            f"{where} is not a manifest mmrhub wrote (a JSON object whose `files` lists paths): it says which files "
            "a push may delete. Delete it on the Hub (the push then deletes nothing) or restore it, and push again."
        )
    return set(files)


def changes(upload: Upload, remote: Remote) -> tuple:
    """(deleted, kept): the repo's files the push removes (those an earlier push of ours wrote, by the manifest, that
    this upload does not hold; never ``.gitattributes``) and leaves (every other file it does not replace)."""
    sent = {path for path, _ in upload.files} | {MANIFEST}
    deleted = sorted(path for path in remote.files if path in remote.ours and path not in sent and path not in KEPT)
    kept = sorted(path for path in remote.files if path not in sent and path not in deleted)
    _check_no_file_on_folder(upload, sent, kept)
    return deleted, kept


def _check_no_file_on_folder(upload: Upload, sent: set, kept: list):
    # the Hub refuses a file where a folder is (or the reverse); said before anything is sent, naming both
    remote_folders = {folder: path for path in kept for folder in _folders(path)}
    local_folders = {folder: path for path in sent for folder in _folders(path)}
    for path in sorted(sent & set(remote_folders)):
        raise ValueError(
            f"{upload.folder / path} is a file, but {upload.repo_id} has a folder {path}/ holding "
            f"{remote_folders[path]}, which no mmrhub push wrote and the push keeps: rename the file in the export, "
            "or move that folder on the Hub, and push again."
        )
    for path in sorted(set(kept) & set(local_folders)):
        raise ValueError(
            f"{upload.folder / path} is a folder, but {upload.repo_id} has a file {path}, which no mmrhub push wrote "
            "and the push keeps: rename the folder in the export, or move that file on the Hub, and push again."
        )


def _folders(path: str) -> list:
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def read_remote(upload: Upload, api: HfApi) -> Remote:
    """The repo's files now and its manifest (an empty ``Remote`` for a repo that does not exist yet); the Hub's
    errors pass through."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        files = api.list_repo_files(upload.repo_id, repo_type=upload.repo_type)
    except RepositoryNotFoundError:
        return Remote()
    if MANIFEST not in files:
        return Remote(files=files, exists=True)
    local = api.hf_hub_download(upload.repo_id, MANIFEST, repo_type=upload.repo_type)
    ours = parse_manifest(Path(local).read_bytes(), f"{upload.repo_id}/{MANIFEST}")
    return Remote(files=files, ours=ours, has_manifest=True, exists=True)


def remote_state(upload: Upload, token: Optional[str] = None) -> Remote:
    """``read_remote`` for a dry run: a Hub that cannot be reached is said, not raised."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        return read_remote(upload, HfApi(token=token or get_token()))
    except (OSError, HfHubHTTPError, *connection_errors()) as err:  # offline mode, no connection, refused
        return Remote(unknown=f"cannot list {upload.repo_id} now ({type(err).__name__})")


def describe_remote(upload: Upload, remote: Remote, dry_run: bool = False) -> str:
    """What the push does (or, ``dry_run``, would do) to the repo's files: a line per file deleted and kept."""
    would = "would be " if dry_run else ""
    if remote.unknown:
        return (
            f"on the Hub: {remote.unknown}; the push deletes only the files that {MANIFEST} there lists (an "
            "earlier mmrhub push wrote them) and this upload does not hold, and keeps every other file"
        )
    if not remote.exists:
        return f"on the Hub: {upload.repo_id} does not exist yet (or is private to another account): nothing to delete"
    deleted, kept = changes(upload, remote)
    why = (
        f"written by an earlier mmrhub push ({MANIFEST}) and not in this upload"
        if remote.has_manifest
        else f"no {MANIFEST}: no file there was written by an mmrhub push"
    )
    lines = [f"on the Hub: {len(deleted)} file(s) {would}deleted ({why}), {len(kept)} kept (not replaced)"]
    lines += [f"  delete  {path}" for path in deleted]
    lines += [f"  keep    {path}{read_with(upload, path)}" for path in kept]
    return "\n".join(lines)


def read_with(upload: Upload, path: str) -> str:
    """For a kept file the card's configs read (a stale shard an older push left): that it is, and what to do."""
    for config, patterns in upload.configs.items():
        if any(fnmatchcase(path, pattern) for pattern in patterns):
            return f"  (load_dataset reads it with config {config}: delete it on the Hub if it is not part of it)"
    return ""


def connection_errors() -> tuple:
    """What the HTTP library ``huggingface_hub`` uses (requests, httpx or its fork) raises when the Hub cannot be
    reached: no connection, refused, timed out."""
    library = sys.modules[type(get_session()).__module__.split(".")[0]]
    found = [getattr(library, name, None) for name in ("TransportError", "ConnectionError", "Timeout")]
    # httpx's base, requests' two; httpx's own ``Timeout`` is a setting, not an error
    return tuple(error for error in found if isinstance(error, type) and issubclass(error, Exception))


def push(upload: Upload, private: bool = False, token: Optional[str] = None) -> tuple:
    """Create the repo (kept if it exists) and commit in one commit the folder's files, the manifest and the
    deletion of the files an earlier push of ours wrote that this one does not hold; returns (URL, the ``Remote``
    it found)."""
    token = token or get_token()
    if not token:
        raise PermissionError("No Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`.")
    api = HfApi(token=token)
    try:
        return _commit(api, upload, private)
    except connection_errors() as err:
        raise ConnectionError(
            f"Cannot reach the Hugging Face Hub at {api.endpoint} to push {upload.repo_id} ({err}); no commit was "
            "made. Check the network (and HF_ENDPOINT), then run the push again."
        ) from err


def _commit(api: HfApi, upload: Upload, private: bool) -> tuple:
    extra = {"space_sdk": SPACE_SDK} if upload.repo_type == "space" else {}
    url = api.create_repo(upload.repo_id, repo_type=upload.repo_type, private=private, exist_ok=True, **extra)
    remote = read_remote(upload, api)
    deleted, _ = changes(upload, remote)
    # Exact paths, never patterns: a name holding `*`, `?` or `[` deletes that one file.
    operations = [CommitOperationDelete(path_in_repo=path, is_folder=False) for path in deleted]
    operations += [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=upload.folder / path) for path, _ in upload.files
    ]
    operations.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=manifest(upload)))
    api.create_commit(
        repo_id=upload.repo_id,
        repo_type=upload.repo_type,
        operations=operations,
        commit_message=f"Upload {upload.folder.name} with mmrhub",
    )
    return str(url), remote
