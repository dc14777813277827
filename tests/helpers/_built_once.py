"""Tiny models built once per test run, shared by every test and every pytest-xdist worker.

Each build lies in a folder named by the digest of what makes it: the builder's module source, its name, its
arguments and the versions of the libraries that write the files. The first worker to ask builds it under a file
lock, into a temporary folder renamed into place when done; the others wait and reuse it. Tests only read what
they are given (a test that damages a model damages a copy: ``_damaged_models.damaged_copy``).
"""

import hashlib
import inspect
import json
import os
import shutil
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from pathlib import Path

from filelock import FileLock

# The libraries whose versions change what a tiny model's files hold.
WRITERS = ("torch", "transformers", "sentence-transformers", "tokenizers", "safetensors")


def shared_root(tmp_path_factory) -> Path:
    """The run's folder that every xdist worker sees (a worker's base temp folder lies in it); the base temp folder
    itself without xdist."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built-once"
    root.mkdir(exist_ok=True)
    return root


def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def build_key(builder, name: str, args: tuple, kwargs: dict) -> str:
    """The digest of what the build's files depend on."""
    facts = {
        "source": inspect.getsource(inspect.getmodule(builder)),
        "builder": builder.__qualname__,
        "name": name,
        "args": repr(args),
        "kwargs": repr(sorted(kwargs.items())),
        "versions": {library: _installed(library) for library in WRITERS},
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def built_once(root: Path, builder, name: str, *args, **kwargs) -> Path:
    """``builder(folder / name, *args, **kwargs)`` run once per key; returns the path it returned."""
    folder = Path(root) / build_key(builder, name, args, kwargs)
    done = folder / "built.json"
    with FileLock(str(folder) + ".lock"):
        if not done.exists():
            partial = folder.with_name(folder.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)  # a build this run began and did not finish
            partial.mkdir()
            result = Path(builder(partial / name, *args, **kwargs))
            relative = result.relative_to(partial)
            (partial / "built.json").write_text(json.dumps({"result": str(relative)}), encoding="utf-8")
            os.rename(partial, folder)
    return folder / json.loads(done.read_text(encoding="utf-8"))["result"]
