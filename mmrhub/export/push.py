"""Publish a folder with ``huggingface_hub``: an exported dataset repo, or a metric folder as a Gradio Space.

The token comes from the environment (``HF_TOKEN``) or a saved ``hf auth login``, as ``HfApi`` reads it.
"""

import sys
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Optional

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


@dataclass
class Upload:
    """What ``push`` will send: the folder's files (relative POSIX path, size) to one repo, and the patterns of the
    remote files it replaces (a dataset's own folders: what is there and not in the upload is deleted)."""

    folder: Path
    repo_id: str
    repo_type: str
    files: list
    delete_patterns: list = field(default_factory=list)


def own_folders(files: list) -> list:
    """``delete_patterns`` for a dataset export: every file under the folders it writes (one per config), so that
    a stale shard of an earlier export (``corpus/test-00001-of-00002.parquet``) cannot stay beside the new ones and
    be read with them; files elsewhere (``.gitattributes``, a folder the export does not write) are kept."""
    return [f"{folder}/*" for folder in sorted({path.split("/")[0] for path in files if "/" in path})]


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
    # upload_folder follows links: one leading out of the folder would publish a file from elsewhere.
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
    deletes = own_folders(files) if repo_type == "dataset" else []
    return Upload(folder=folder, repo_id=repo_id, repo_type=repo_type, files=sized, delete_patterns=deletes)


def describe(upload: Upload) -> str:
    """What an upload holds, a line per file."""
    total = sum(size for _, size in upload.files)
    lines = [f"{upload.repo_type} {upload.repo_id}: {len(upload.files)} file(s), {total:,} bytes from {upload.folder}"]
    lines += [f"  {size:>14,}  {path}" for path, size in upload.files]
    return "\n".join(lines)


def remote_changes(upload: Upload, remote: list) -> tuple:
    """(deleted, kept): the repo's files (``remote``) that the push removes and leaves, as ``upload_folder`` plans
    it (``delete_patterns`` matched by ``filter_repo_objects``; ``.gitattributes`` always kept; a file the upload
    replaces is in neither)."""
    sent = {path for path, _ in upload.files}
    matched = (
        set(filter_repo_objects(remote, allow_patterns=upload.delete_patterns)) if upload.delete_patterns else set()
    )
    deleted = sorted(path for path in remote if path in matched and path not in sent and path != ".gitattributes")
    kept = sorted(path for path in remote if path not in sent and path not in deleted)
    return deleted, kept


def remote_files(upload: Upload, token: Optional[str] = None):
    """The repo's files now ([] for a repo that does not exist yet), or the reason they cannot be listed."""
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.errors import RepositoryNotFoundError

    api = HfApi(token=token or get_token())
    try:
        return api.list_repo_files(upload.repo_id, repo_type=upload.repo_type)
    except RepositoryNotFoundError:
        return []
    except (OSError, HfHubHTTPError, *connection_errors()) as err:  # offline mode, no connection, refused
        return f"cannot list {upload.repo_id} now ({type(err).__name__})"


def describe_remote(upload: Upload, remote) -> str:
    """What the push does to the repo's other files: ``remote`` is ``remote_files``' answer (None: not asked)."""
    if not upload.delete_patterns:
        return f"on the Hub: nothing is deleted; the files of {upload.repo_id} this upload does not replace are kept"
    folders = ", ".join(pattern[:-1] for pattern in upload.delete_patterns)
    if isinstance(remote, str):
        return (
            f"on the Hub: {remote}; the push deletes the files under {folders} that this upload does not hold and "
            "keeps every other file"
        )
    if not remote:
        return f"on the Hub: {upload.repo_id} does not exist yet (or is private to another account): nothing to delete"
    deleted, kept = remote_changes(upload, remote)
    lines = [f"on the Hub: {len(deleted)} file(s) deleted (under {folders}, not in this upload), {len(kept)} kept"]
    lines += [f"  delete  {path}" for path in deleted] + [f"  keep    {path}" for path in kept]
    return "\n".join(lines)


def connection_errors() -> tuple:
    """What the HTTP library ``huggingface_hub`` uses (requests, httpx or its fork) raises when the Hub cannot be
    reached: no connection, refused, timed out."""
    library = sys.modules[type(get_session()).__module__.split(".")[0]]
    found = [getattr(library, name, None) for name in ("TransportError", "ConnectionError", "Timeout")]
    # httpx's base, requests' two; httpx's own ``Timeout`` is a setting, not an error
    return tuple(error for error in found if isinstance(error, type) and issubclass(error, Exception))


def push(upload: Upload, private: bool = False, token: Optional[str] = None) -> str:
    """Create the repo (kept if it exists) and upload the folder in one commit, deleting the remote files of the
    export's own folders that it does not hold; returns the repo URL."""
    token = token or get_token()
    if not token:
        raise PermissionError("No Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`.")
    api = HfApi(token=token)
    try:
        return _upload(api, upload, private)
    except connection_errors() as err:
        raise ConnectionError(
            f"Cannot reach the Hugging Face Hub at {api.endpoint} to push {upload.repo_id} ({err}); no commit was "
            "made. Check the network (and HF_ENDPOINT), then run the push again."
        ) from err


def _upload(api: HfApi, upload: Upload, private: bool) -> str:
    extra = {"space_sdk": SPACE_SDK} if upload.repo_type == "space" else {}
    url = api.create_repo(upload.repo_id, repo_type=upload.repo_type, private=private, exist_ok=True, **extra)
    api.upload_folder(
        repo_id=upload.repo_id,
        folder_path=upload.folder,
        repo_type=upload.repo_type,
        ignore_patterns=IGNORE_PATTERNS,
        delete_patterns=upload.delete_patterns or None,
        commit_message=f"Upload {upload.folder.name} with mmrhub",
    )
    return str(url)
