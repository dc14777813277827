"""How a run was made, written beside it (``RUN.json.meta.json``), so that ``mmrhub rerun`` can make it again: the
command line and every option (defaults included), the benchmark, data folder and split, fingerprints of the tables
and of the queries and corpus the run saw, the candidates file's hash, the model's identity (Hub commit or folder
hash), the preset and every setting with its source, the device and dtype, and the versions of every library that
shapes the pixels, tokens, vectors or scores (and of mmrhub, with its commit when run from a checkout)."""

import dataclasses
import hashlib
import os
import sys
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


def data_record(data, queries, corpus, images_read=(True, True)) -> dict:
    """What the run read: benchmark, folder (absolute; whether it is the bundled sample), split, each judgment
    table's sha256, and for the queries and the corpus their count, fingerprint (``LoadedSide.fingerprint``: ids,
    texts, image names and bytes) and, where the model read that side's images (``images_read``: queries', corpus'),
    each image's digest by its name (``image_digests``), so that a repeated run names an image whose bytes changed.
    A side read as text alone (PreFLMR's passages) lists no images among its inputs."""
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
            name: {"count": len(side.ids), "fingerprint": side.fingerprint}
            | ({"images": side.images_record()} if read else {})
            for name, side, read in (("queries", queries, images_read[0]), ("corpus", corpus, images_read[1]))
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
