"""A run's record, ``RUN.json.meta.json`` beside it (``mmrhub.retrieve.provenance`` and ``mmrhub mteb`` write it):
where it lies, and what the tables repeat from it. Today that is whether the run's model had random weights, as the
checkpoints ``scripts/make_tiny_models.py`` builds have: the builders mark such a folder with ``RANDOM_WEIGHTS``,
the record of a run made with it says so, and every table with a row of that run says so under it."""

import json
import os
from pathlib import Path

from mmrhub.writing import write_text

RANDOM_WEIGHTS = "random-weights.json"  # in a checkpoint folder: its weights were drawn at random, never trained


def meta_path(run_path) -> Path:
    """Where a run's metadata goes: beside it, ``<run file>.meta.json``."""
    run_path = Path(run_path)
    return run_path.with_name(run_path.name + ".meta.json")


def mark_random_weights(folder) -> Path:
    """Mark the checkpoint ``folder`` (a builder of random models just saved it) as having random weights;
    returns the folder."""
    note = {
        "weights": "random",
        "why": "built offline with random weights, to test the pipeline and its speed: its scores mean nothing",
    }
    write_text(Path(folder) / RANDOM_WEIGHTS, json.dumps(note, indent=1) + "\n")
    return Path(folder)


def has_random_weights(model_id: str) -> bool:
    """Whether ``model_id`` is a local checkpoint folder marked as having random weights (a Hub id never is)."""
    return os.path.isfile(os.path.join(model_id, RANDOM_WEIGHTS))


def made_with_random_weights(run_path) -> bool:
    """Whether the record beside ``run_path`` says the run's model had random weights (no record: False). A record
    of another run file (it names the file it describes) says nothing of this one."""
    try:
        meta = json.loads(meta_path(run_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("run") == Path(run_path).name and meta.get("random_weights") is True
