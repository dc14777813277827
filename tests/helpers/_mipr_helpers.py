"""Fixtures' building blocks for the MIPR builder tests: copies of the bundled sample to break on purpose."""

import json
import re
import shutil
from pathlib import Path

import pytest

import mipr


def copy_sample(target: Path) -> Path:
    shutil.copytree(mipr.SAMPLE_DIR, target)
    return target


def read_jsonl(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def edit_jsonl(path: Path, edit) -> None:
    """Apply ``edit(rows)`` (in place) to a JSON Lines file."""
    rows = read_jsonl(path)
    edit(rows)
    write_jsonl(path, rows)


def prepare(config, data_dir, **kwargs):
    """``mipr.load`` of a copy, with a cache of its own beside it."""
    return mipr.load(config, data_dir=data_dir, cache_dir=str(data_dir.parent / "cache"), **kwargs)


def expect(config, data_dir, message):
    """Loading ``config`` fails with a MiprDataError holding ``message``."""
    with pytest.raises(mipr.MiprDataError, match=re.escape(message)):
        prepare(config, data_dir)
