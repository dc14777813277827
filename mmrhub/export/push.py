"""Publish a folder with ``huggingface_hub``: an exported dataset repo, or a metric folder as a Gradio Space.

The token comes from the environment (``HF_TOKEN``) or a saved ``hf auth login``, as ``HfApi`` reads it.
"""

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

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
    """What ``push`` will send: the folder's files (relative POSIX path, size) to one repo."""

    folder: Path
    repo_id: str
    repo_type: str
    files: list


def _check_dataset(folder: Path, files: list, repo_id: str):
    if "README.md" not in files:
        raise ValueError(f"{folder} has no README.md: export it with `mmrhub export` first.")
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
    return Upload(folder=folder, repo_id=repo_id, repo_type=repo_type, files=sized)


def describe(upload: Upload) -> str:
    """What an upload holds, a line per file."""
    total = sum(size for _, size in upload.files)
    lines = [f"{upload.repo_type} {upload.repo_id}: {len(upload.files)} file(s), {total:,} bytes from {upload.folder}"]
    lines += [f"  {size:>14,}  {path}" for path, size in upload.files]
    return "\n".join(lines)


def connection_errors() -> tuple:
    """What the HTTP library ``huggingface_hub`` uses (requests, httpx or its fork) raises when the Hub cannot be
    reached: no connection, refused, timed out."""
    library = sys.modules[type(get_session()).__module__.split(".")[0]]
    found = [getattr(library, name, None) for name in ("TransportError", "ConnectionError", "Timeout")]
    # httpx's base, requests' two; httpx's own ``Timeout`` is a setting, not an error
    return tuple(error for error in found if isinstance(error, type) and issubclass(error, Exception))


def push(upload: Upload, private: bool = False, token: Optional[str] = None) -> str:
    """Create the repo (kept if it exists) and upload the folder in one commit; returns the repo URL."""
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
        commit_message=f"Upload {upload.folder.name} with mmrhub",
    )
    return str(url)
