"""Each metric folder's Space page, loaded as a Space runs it: the folder copied to one named ``app``."""

import importlib.util
import os
import shutil

from _paths import ROOT

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"  # before gradio is imported: no call home


def load_app(path):
    spec = importlib.util.spec_from_file_location(f"space_app_{path.parent.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def space_app(name: str, root):
    """``metrics/<name>`` copied to ``root/<name>/app`` and its app.py loaded (gradio imported, nothing started)."""
    folder = root / name / "app"  # a Space's folder: evaluate.load(folder) would load app.py as the metric
    shutil.copytree(ROOT / "metrics" / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return load_app(folder / "app.py")
