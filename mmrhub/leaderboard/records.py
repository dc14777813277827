"""What a run's record (``RUN.json.meta.json``, beside the run) says of it, as a board row shows it: the model, its
revision or files, the preset, dtype and device, the versions, the command, and whether ``mmrhub rerun`` can make
the run again from it. The one module of the leaderboard that reads run records, so that where they live is named
here alone.

A record is a file anyone may hand over: only the fields below are kept, each checked for its type and cut to a
bounded length, and a record that describes another run file says nothing of this one."""

import shlex
from pathlib import Path
from typing import Optional

from mmr_inputs import InputError
from mmr_inputs import load_json
from mmr_inputs import read_regular
from mmrhub.records.meta import MAX_RECORD
from mmrhub.records.meta import meta_path
from mmrhub.records.meta import read_meta
from mmrhub.records.provenance import file_digest

MAX_TEXT = 500  # characters of one field shown (a command line, an id)
MAX_VERSIONS = 40  # libraries listed


def sha256_of(path) -> str:
    """The sha256 of a file (a run, a judgment table), as run records fingerprint files."""
    return file_digest(path)


def record_path(run_path) -> Path:
    """Where a run's record lies: beside it, ``<run file>.meta.json``."""
    return meta_path(run_path)


def read_record(run_path) -> tuple:
    """(what a board shows of the record beside ``run_path`` (``summary``), or None; a note for the user, or ''). A
    record naming another run file, or that is not a JSON object, is set aside with a note; one that cannot be read
    (damaged JSON, too large) is an error naming it."""
    path = meta_path(run_path)
    if not path.is_file():
        return None, ""
    if path.stat().st_size > MAX_RECORD:  # before reading it: a record is a few kB
        raise InputError(f"{path}: larger than {MAX_RECORD:,} bytes; expected a run's record of a few kB.")
    meta = load_json(str(path), read_regular(path))
    if not isinstance(meta, dict):
        return None, f"{path} is not a run's record (a JSON object): the entry has no record."
    if meta.get("run") != Path(run_path).name:
        return None, (
            f"{path} is the record of {_text(meta.get('run'))!r}, not of {Path(run_path).name}: the entry has no "
            "record."
        )
    return summary(meta, path), ""


def summary(meta: dict, path) -> dict:
    """What a board shows of a record (a dict read from the record file ``path``): only checked fields."""
    model = meta.get("model") if isinstance(meta.get("model"), dict) else {}
    # the model's identity (provenance.model_identity: a Hub id's commit, a folder's files) under the cache key
    model = model.get("model") if isinstance(model.get("model"), dict) else model
    found = {
        "command": _text(meta.get("command")),
        "model": _text(model.get("id") or model.get("name") or meta.get("model_name") or _model_name(meta)),
        "revision": _text(model.get("revision") or meta.get("model_revision")),
        "commit": _text(model.get("commit")),
        "files_sha256": _text(model.get("files")),  # a local checkpoint folder, by its content
        "preset": _text(meta.get("preset")),
        "dtype": _text(meta.get("dtype")),
        "device": _text(meta.get("device_name") or meta.get("device")),
        "random_weights": meta.get("random_weights") is True,
        "versions": _versions(meta.get("versions")),
        "command_line": _command_line(meta.get("command_line")),
        "mmrhub_commit": _text((meta.get("mmrhub_source") or {}).get("commit"))
        if isinstance(meta.get("mmrhub_source"), dict)
        else None,
        "mteb": _text(meta.get("mteb_version")),
        "record_sha256": file_digest(path),
        "rerun": _rerunnable(path),
    }
    return {key: value for key, value in found.items() if value not in (None, "", {})}


def _rerunnable(record) -> bool:
    """Whether ``mmrhub rerun`` accepts the record (a retrieve or rerank run with its options)."""
    try:
        read_meta(record)
    except (OSError, ValueError):
        return False
    return True


def _model_name(meta: dict) -> Optional[str]:
    """A local checkpoint's folder name rather than the absolute path ``model_id`` holds (it names the user's disk)."""
    model_id = meta.get("model_id")
    if isinstance(model_id, str) and model_id.startswith("/"):
        return Path(model_id).name
    return model_id


def _text(value) -> Optional[str]:
    """A scalar as text, cut to MAX_TEXT characters; anything else (a list, an object) is left out."""
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        return None
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _versions(value) -> dict:
    if not isinstance(value, dict):
        return {}
    return {_text(name): _text(version) for name, version in list(value.items())[:MAX_VERSIONS] if _text(name)}


def _command_line(value) -> Optional[str]:
    if not isinstance(value, list) or not all(isinstance(arg, str) for arg in value):
        return None
    return _text(shlex.join(value))
