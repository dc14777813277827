"""What identifies a model's weights, for the embedding and rerank cache keys."""

import hashlib
import os
from pathlib import Path

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
