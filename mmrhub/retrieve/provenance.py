"""How a run was made, written beside it (``RUN.json.meta.json``): the model's identity (Hub commit or folder hash),
the preset and every setting with its source, the dtype, and the library versions."""

import json
import os
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


def caption(model_id: str, settings) -> str:
    """The line above a printed table: the model and its preset."""
    return f"{model_id} (preset: {settings.name})"
