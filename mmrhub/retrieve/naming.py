"""Names taken from a model id: a table row's name and a run file's default path. Imports nothing heavy."""

import os
import re
from pathlib import Path


def model_name(model_id: str) -> str:
    """The last part of a Hub id or folder (Qwen3-VL-Embedding-8B): a table row's name."""
    return os.path.basename(os.path.normpath(model_id))


def slug(model_id: str) -> str:
    """``model_name`` with anything but letters, digits and ``._-`` replaced by ``_``: safe in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name(model_id))


def default_output(benchmark_name: str, model_id: str) -> Path:
    """``runs/<benchmark>_<model slug>.json``."""
    return Path("runs") / f"{benchmark_name}_{slug(model_id)}.json"
