"""How a run was made, written beside it (``RUN.json.meta.json``): the model's identity (Hub commit or folder hash),
the preset and every setting with its source, the dtype, and the library versions."""

import json
from importlib import metadata
from pathlib import Path

from mmrhub.writing import write_text

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


def write_meta(run_path, command: str, identity: dict, settings, **fields) -> Path:
    """Write the run's metadata: ``identity`` (the cache key: model, dtype, lengths), the preset's settings and
    sources, the versions, and ``fields`` (device, candidates)."""
    meta = {
        "command": command,
        "run": Path(run_path).name,
        "model": identity,
        "preset": settings.name,
        "settings": settings.settings(),
        "versions": versions(),
        **fields,
    }
    return write_text(meta_path(run_path), json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n")


def caption(model_id: str, settings) -> str:
    """The line above a printed table: the model and its preset."""
    return f"{model_id} (preset: {settings.name})"
