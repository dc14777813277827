"""An export is written aside and moved into place: an interrupted one leaves no half repo."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mmrhub.export.repo as export_repo
from mmrhub.export.atomic import MARKER
from mmrhub.export.atomic import atomic_dir

from _export_helpers import export
from _export_helpers import run_cli

KILL_AFTER_FIRST_CONFIG = """
import os, signal, sys
import mmrhub.export.repo as export_repo
real = export_repo.write_split
def write_then_die(*args, **kwargs):
    written = real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
export_repo.write_split = write_then_die
from mmrhub.benchmarks import BENCHMARKS
export_repo.export(BENCHMARKS["mipr"], sys.argv[1])
"""


def _fail_on(config_name, error):
    real = export_repo.write_split

    def write(dataset, work, name, *args, **kwargs):
        if name == config_name:
            assert list(Path(work).rglob("*.parquet")), "the failure must come after a config was written"
            raise error
        return real(dataset, work, name, *args, **kwargs)

    return write


def _leftovers(parent: Path):
    return sorted(entry.name for entry in parent.iterdir())


@pytest.mark.parametrize("error", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_failed_export_leaves_nothing(tmp_path, monkeypatch, error):
    monkeypatch.setattr(export_repo, "write_split", _fail_on("corpus", error))
    with pytest.raises(type(error)):
        export("mipr", tmp_path / "mipr")
    assert _leftovers(tmp_path) == []


def test_failed_overwrite_keeps_the_old_repo(tmp_path, monkeypatch):
    out = export("mipr", tmp_path / "mipr")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(export_repo, "write_split", _fail_on("qrels", RuntimeError("boom")))
    with pytest.raises(RuntimeError, match="boom"):
        export("mipr", out, overwrite=True)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert _leftovers(tmp_path) == ["mipr"]


def test_existing_folder_is_refused_without_overwrite(tmp_path, capsys):
    (tmp_path / "mipr").mkdir()
    (tmp_path / "mipr" / "keep.txt").write_text("mine")
    assert run_cli(["export", "mipr", str(tmp_path / "mipr")]) == 1
    assert f"{tmp_path / 'mipr'} already exists; remove it or pass --overwrite." in capsys.readouterr().err
    assert (tmp_path / "mipr" / "keep.txt").read_text() == "mine"


def test_overwrite_replaces_an_earlier_export(tmp_path):
    assert run_cli(["export", "mipr", str(tmp_path / "mipr")]) == 0
    (tmp_path / "mipr" / "stale.txt").write_text("from the earlier export's folder")
    assert run_cli(["export", "mipr", str(tmp_path / "mipr"), "--overwrite"]) == 0
    assert sorted(p.name for p in (tmp_path / "mipr").iterdir()) == [MARKER, "README.md", "corpus", "qrels", "queries"]
    assert _leftovers(tmp_path) == ["mipr"]


def test_killed_export_leaves_no_repo_and_its_debris_is_cleared(tmp_path):
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", KILL_AFTER_FIRST_CONFIG, str(tmp_path / "out" / "mipr")], env=env)
    assert result.returncode == -9
    partial = [entry for entry in (tmp_path / "out").iterdir()]
    assert len(partial) == 1 and partial[0].name.startswith(".mipr.partial-")
    assert list(partial[0].rglob("*.parquet"))
    export("mipr", tmp_path / "out" / "mipr")
    assert _leftovers(tmp_path / "out") == ["mipr"]


def test_concurrent_exports_of_one_folder_never_mix(tmp_path):
    with pytest.raises(OSError):
        with atomic_dir(tmp_path / "a") as first:
            (first / "x").write_text("1")
            with atomic_dir(tmp_path / "a") as second:  # its start must not clear the live first folder
                (second / "y").write_text("2")
            assert (first / "x").read_text() == "1"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [MARKER, "y"]
    assert _leftovers(tmp_path) == ["a"]
