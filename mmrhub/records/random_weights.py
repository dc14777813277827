"""Checkpoints with random weights, as ``scripts/make_tiny_models.py`` builds them: the builders mark such a folder
with ``RANDOM_WEIGHTS``, the record of a run made with it says so (``meta.write_meta``), and every table with a row of
that run says so under it (``meta.made_with_random_weights``)."""

import json
import os
from pathlib import Path

from mmrhub.writing import write_text

RANDOM_WEIGHTS = "random-weights.json"  # in a checkpoint folder: its weights were drawn at random, never trained


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
