"""Imports the measure code of ``metrics/<name>/`` so the CLI scores with exactly the evaluate modules' math."""

import importlib
import os
import sys
import types
from pathlib import Path

ENV_VAR = "MMRHUB_METRICS_DIR"


def metrics_dir() -> Path:
    """The ``metrics/`` folder: $MMRHUB_METRICS_DIR, else the checkout's (mmrhub is installed editable)."""
    candidates = [Path(os.environ[ENV_VAR])] if os.environ.get(ENV_VAR) else []
    candidates.append(Path(__file__).resolve().parent.parent / "metrics")
    for candidate in candidates:
        if (candidate / "mipr" / "mipr_measures.py").is_file():
            return candidate
    raise FileNotFoundError(
        f"Cannot find the metric modules (metrics/mipr/mipr_measures.py) in any of: "
        f"{', '.join(map(str, candidates))}; set {ENV_VAR} to the repository's metrics/ folder."
    )


def measures(name: str):
    """The ``<name>_measures`` module of ``metrics/<name>/``, imported as part of a package of that folder."""
    package = f"_mmrhub_metric_{name}"
    if package not in sys.modules:
        module = types.ModuleType(package)
        module.__path__ = [str(metrics_dir() / name)]
        sys.modules[package] = module
    return importlib.import_module(f"{package}.{name}_measures")
