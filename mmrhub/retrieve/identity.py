"""What identifies a model's weights, for the embedding cache key, without reading gigabytes."""

import hashlib
import os
from pathlib import Path

_EDGE = 1 << 20  # bytes hashed at each end of a file


def files_digest(folder) -> str:
    """Hash of every file's relative path, size, first and last MiB: changes when any file is replaced."""
    digest = hashlib.sha256()
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        size = path.stat().st_size
        digest.update(f"{relative}\0{size}\0".encode())
        with open(path, "rb") as f:
            digest.update(f.read(_EDGE))
            if size > 2 * _EDGE:
                f.seek(-_EDGE, os.SEEK_END)
                digest.update(f.read(_EDGE))
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
    if os.path.isdir(model_id):
        return {"name": os.path.basename(os.path.abspath(model_id)), "files": files_digest(model_id)}
    return {"id": model_id, "revision": revision, "commit": hub_commit(model_id, revision)}
