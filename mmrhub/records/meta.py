"""A run's record, ``RUN.json.meta.json`` beside it: where it lies, how it is written (``write_meta``: the retrieve
and mteb wings) and read back (``read_meta``, ``check_fields``: ``rerun``), and what the tables repeat from it
(``made_with_random_weights``). A record is a file anyone may hand over, so every field read from it is checked and a
problem is one line naming the record, the key and what was expected."""

import json
import os
from pathlib import Path

from mmr_inputs import load_json_file
from mmrhub.records.provenance import versions
from mmrhub.records.random_weights import has_random_weights
from mmrhub.writing import write_text

MAX_RECORD = 1 << 26  # bytes of a run's metadata: a few kB as written, so a bound far above that
MAX_TEXT = 4096  # characters of a recorded text (a path, an id, an instruction): PATH_MAX on Linux


class RecordError(ValueError):
    """A record that cannot be repeated: the message names the record, the key and what was expected."""


def meta_path(run_path) -> Path:
    """Where a run's metadata goes: beside it, ``<run file>.meta.json``."""
    run_path = Path(run_path)
    return run_path.with_name(run_path.name + ".meta.json")


def model_source(model_id: str) -> str:
    """Which model a run is of, to tell runs apart: a local folder's absolute path, else the Hub id."""
    return os.path.abspath(model_id) if os.path.isdir(model_id) else model_id


def check_run_replaceable(run_path, model_id: str) -> None:
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
    whether the model's weights are random (``mmrhub.records.random_weights``), the preset's settings and sources, the
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


def made_with_random_weights(run_path) -> bool:
    """Whether the record beside ``run_path`` says the run's model had random weights (no record: False). A record
    of another run file (it names the file it describes) says nothing of this one."""
    try:
        meta = json.loads(meta_path(run_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("run") == Path(run_path).name and meta.get("random_weights") is True


def check_fields(path, recorded: dict) -> None:
    """The record's own fields that ``rerun`` reads: the run's file name (beside the record), the model's id and the
    folder the run ran in."""
    run = recorded.get("run")
    if not isinstance(run, str) or not run or run != Path(run).name or run in (".", "..") or "\x00" in run:
        raise RecordError(f"{path}: run: expected the run's file name, beside the record, got {shown(run)}.")
    recorded_text(path, "model_id", recorded.get("model_id"))
    if recorded.get("cwd") is not None:
        recorded_text(path, "cwd", recorded["cwd"])
    if not isinstance(recorded.get("options"), dict):
        raise RecordError(
            f"{path}: options: expected an object of the run's options, got {shown(recorded['options'])}."
        )


def recorded_text(path, dotted: str, value, flag: str = "") -> str:
    """``value`` when it is a text a record may hold (``dotted``: its key, ``flag``: the option that sets it)."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT or "\x00" in value:
        expected = f"a non-empty text of at most {MAX_TEXT:,} characters, without NUL"
        raise RecordError(f"{path}: {dotted}: expected {expected}{flag}, got {shown(value)}.")
    return value


def shown(value, limit: int = 80) -> str:
    """A recorded value in a message, as JSON writes it, long ones cut."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return cut(text, limit)


def cut(text: str, limit: int = 80) -> str:
    """``text``, ending in '...' where longer than ``limit``."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
