"""How a run was made, written beside it (``RUN.json.meta.json``), so that ``mmrhub rerun`` can make it again: the
command line and every option (defaults included), the benchmark, data folder and split, fingerprints of the tables
and of the queries and corpus the run saw, the candidates file's hash, the model's identity (Hub commit or folder
hash), the preset and every setting with its source, the device and dtype, and the versions of every library that
shapes the pixels, tokens, vectors or scores (and of mmrhub, with its commit when run from a checkout)."""

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

from mmr_inputs import load_json_file
from mmrhub.run_records import has_random_weights
from mmrhub.run_records import meta_path
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

    for filename in ("config.json", "modules.json", "preprocessor_config.json"):  # the last: an image processor
        path = try_to_load_from_cache(model_id, filename, revision=revision)
        if isinstance(path, str):
            return Path(path).parent.name
    return None


def model_identity(model_id: str, revision=None) -> dict:
    """A local folder by its content; a Hub id by the commit its snapshot was taken at (a commit fixes the files)."""
    if os.path.isdir(model_id):
        return {"name": os.path.basename(os.path.abspath(model_id)), "files": files_digest(model_id)}
    return {"id": model_id, "revision": revision, "commit": hub_commit(model_id, revision)}


LIBRARIES = (
    "torch",
    "torchvision",
    "transformers",
    "sentence-transformers",
    "tokenizers",
    "pillow",  # decides every decoded and resized pixel
    "numpy",
    "pyarrow",
    "datasets",
    "mmrhub",
)


def versions(libraries: tuple = LIBRARIES) -> dict:
    """The installed version of each of ``libraries`` (by default those that shape the pixels, tokens, vectors or
    scores; None when not installed), and Python's."""
    import platform  # here, with importlib.metadata: every command imports this module, few write a record
    from importlib import metadata

    found = {}
    for name in libraries:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    found["python"] = platform.python_version()
    return found


def source_commit() -> dict:
    """The git commit mmrhub runs from, and whether its tracked files differ from it, when it runs from a checkout
    (an editable install); None for an installed wheel or without git."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "modified": bool(status.strip())}


def options_record(options) -> dict:
    """A frozen options dataclass as JSON: every field, defaults included; the benchmark by its name."""
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        if hasattr(options, "benchmark") and hasattr(options.benchmark, "name"):  # DataOptions
            return {
                f.name: getattr(options, f.name) if f.name != "benchmark" else options.benchmark.name
                for f in dataclasses.fields(options)
            }
        return {f.name: options_record(getattr(options, f.name)) for f in dataclasses.fields(options)}
    if isinstance(options, (list, tuple)):
        return [options_record(value) for value in options]
    return options


def data_record(data, queries, corpus) -> dict:
    """What the run read: benchmark, folder (absolute; whether it is the bundled sample), split, each judgment
    table's sha256, and for the queries and the corpus their count, fingerprint (``LoadedSide.fingerprint``: ids,
    texts, image names and bytes) and each image's digest by its name (``image_digests``), so that a repeated run
    names an image whose bytes changed."""
    benchmark = data.benchmark
    remote = "://" in data.folder  # a URL or the Hub: recorded as given, its tables by the fingerprints below
    folder = data.folder if remote else Path(data.folder).resolve()
    tables = {}
    for path in [] if remote else benchmark.judgment_files(folder):
        path = Path(path)
        tables[path.relative_to(folder).as_posix() if path.is_relative_to(folder) else str(path)] = file_digest(path)
    return {
        "benchmark": benchmark.name,
        "folder": str(folder),
        "sample": data.data_dir is None,
        "split": data.split or benchmark.split,
        "images_dir": data.images_dir,
        "tables": tables,
        **{
            name: {"count": len(side.ids), "fingerprint": side.fingerprint, "images": side.images_record()}
            for name, side in (("queries", queries), ("corpus", corpus))
        },
    }


def candidates_record(path) -> dict:
    """The candidates file a run ranked or reranked: its path and sha256 (None without one)."""
    if not path:
        return {"candidates": None, "candidates_sha256": None}
    return {"candidates": str(path), "candidates_sha256": file_digest(path)}


def environment_record(device, dtype) -> dict:
    """Where the run ran: device (and its name on CUDA), dtype, mmrhub's commit, the command line (the libraries'
    versions: ``write_meta``)."""
    name = None
    if str(device).startswith("cuda"):
        import torch

        name = torch.cuda.get_device_name(device)
    return {
        "device": str(device),
        "device_name": name,
        "dtype": str(dtype),
        "mmrhub_source": source_commit(),
        "command_line": list(sys.argv),
        "cwd": os.getcwd(),  # what relative paths in the options were relative to
    }


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
    whether the model's weights are random (``mmrhub.run_records``), the preset's settings and sources, the
    versions, and ``fields`` (``options_record``, ``data_record``, ``candidates_record``, ``environment_record``,
    ...)."""
    meta = {
        "command": command,
        "run": Path(run_path).name,
        "model_id": model_source(model_id),
        "model": identity,
        "random_weights": has_random_weights(model_id),
        "preset": settings.name,
        "settings": settings.settings(),
        "versions": versions(),
        **fields,
    }
    return write_text(meta_path(run_path), json.dumps(meta, indent=1, ensure_ascii=False, default=str) + "\n")


MAX_RECORD = 1 << 26  # bytes of a run's metadata: a few kB as written, so a bound far above that


def read_meta(path) -> dict:
    """A run's metadata as written by ``write_meta``; an error naming the file when it is not one."""
    path = Path(path)
    try:
        meta = load_json_file(str(path), limit=MAX_RECORD)  # the one way in: a FIFO is refused, not waited on
    except OSError as err:  # an InputError (a FIFO, damaged JSON) names the file itself
        raise OSError(err.errno, f"{path}: cannot read the run's metadata: {err.strerror or err}") from None
    if not isinstance(meta, dict) or meta.get("command") not in ("retrieve", "rerank"):
        raise ValueError(f"{path}: not the metadata of a retrieve or rerank run (RUN.json.meta.json)")
    if "options" not in meta:
        raise ValueError(
            f"{path}: written before runs recorded their options, so it cannot be repeated; run the command again."
        )
    return meta
