"""How a run was made, written beside it (``RUN.json.meta.json``): the model's identity (Hub commit or folder hash),
the preset and every setting with its source, the dtype, and the library versions."""

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

from mmrhub.writing import write_text

_BLOCK = 8 << 20  # bytes read at a time while hashing


def file_digest(path) -> str:
    """sha256 of the whole file: checkpoints that differ anywhere get different digests."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def files_digest(folder) -> str:
    """Hash of every file's relative path and full content (hidden files and folders left out)."""
    digest = hashlib.sha256()
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        digest.update(f"{relative}\0{file_digest(path)}\0".encode())
    return digest.hexdigest()


def hub_commit(model_id: str, revision=None):
    """The commit of a Hub model as cached locally (it was just loaded), or None if it cannot be told."""
    from huggingface_hub import try_to_load_from_cache

    for filename in ("config.json", "modules.json"):
        path = try_to_load_from_cache(model_id, filename, revision=revision)
        if isinstance(path, str):
            return Path(path).parent.name
    return None


def model_identity(model_id: str, revision=None) -> dict:
    """A local folder by its content; a Hub id by the commit its snapshot was taken at (a commit fixes the files)."""
    if os.path.isdir(model_id):
        return {"name": os.path.basename(os.path.abspath(model_id)), "files": files_digest(model_id)}
    return {"id": model_id, "revision": revision, "commit": hub_commit(model_id, revision)}


LIBRARIES = ("torch", "torchvision", "transformers", "sentence-transformers", "mmrhub")


def versions() -> dict:
    """The installed version of each library that shapes the vectors or scores (None when not installed)."""
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def meta_path(run_path) -> Path:
    """Where a run's metadata goes: beside it, ``<run file>.meta.json``."""
    run_path = Path(run_path)
    return run_path.with_name(run_path.name + ".meta.json")


def model_source(model_id: str) -> str:
    """Which model a run is of, to tell runs apart: a local folder's absolute path, else the Hub id."""
    return os.path.abspath(model_id) if os.path.isdir(model_id) else model_id


def check_replaceable(run_path, model_id: str) -> None:
    """A run file named after its model (the default ``runs/<benchmark>_<model>.json``, baseline's names) is replaced
    only by a run of the same model: two folders called ``model`` get the same name, and a file no run of ours
    wrote is not ours to replace."""
    run_path = Path(run_path)
    if not run_path.exists():
        return
    try:
        made_by = json.loads(meta_path(run_path).read_text(encoding="utf-8")).get("model_id")
    except (OSError, ValueError, AttributeError):
        made_by = None
    if made_by != model_source(model_id):
        holder = f"a run of {made_by}" if made_by else "a file whose metadata names no model"
        raise ValueError(
            f"{run_path} holds {holder}; give --output PATH for the run of {model_id}, or move that file away."
        )


def write_meta(run_path, command: str, model_id: str, identity: dict, settings, **fields) -> Path:
    """Write the run's metadata: the model (``model_source``), ``identity`` (the cache key: model, dtype, lengths),
    the preset's settings and sources, the versions, and ``fields`` (device, candidates)."""
    meta = {
        "command": command,
        "run": Path(run_path).name,
        "model_id": model_source(model_id),
        "model": identity,
        "preset": settings.name,
        "settings": settings.settings(),
        "versions": versions(),
        **fields,
    }
    return write_text(meta_path(run_path), json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n")
