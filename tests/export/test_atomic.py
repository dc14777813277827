"""An export is written aside and moved into place: an interrupted one leaves no half repo."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _export_helpers import export
from _export_helpers import run_cli

import mmrhub.export.repo as export_repo
from mmrhub.export.atomic import MARKER
from mmrhub.export.atomic import atomic_dir
from mmrhub.export.atomic import written_files

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
    (tmp_path / "mipr" / "README.md").write_text("edited: the export wrote this file, so it may replace it")
    assert run_cli(["export", "mipr", str(tmp_path / "mipr"), "--overwrite"]) == 0
    assert sorted(p.name for p in (tmp_path / "mipr").iterdir()) == [MARKER, "README.md", "corpus", "qrels", "queries"]
    assert (tmp_path / "mipr" / "README.md").read_text().startswith("---")
    assert _leftovers(tmp_path) == ["mipr"]


@pytest.mark.parametrize("added", ["notes.txt", ".git/HEAD", "corpus/extra.parquet"])
def test_overwrite_never_removes_what_the_export_did_not_write(tmp_path, capsys, added):
    out = tmp_path / "mipr"
    assert run_cli(["export", "mipr", str(out)]) == 0
    (out / added).parent.mkdir(parents=True, exist_ok=True)
    (out / added).write_text("mine")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert run_cli(["export", "mipr", str(out), "--overwrite"]) == 1
    assert capsys.readouterr().err == (
        f"mmrhub export: error: {out} holds 1 file(s) the export did not write ({added}): --overwrite never removes "
        "them. Move them out, or choose a new OUT folder.\n"
    )
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert _leftovers(tmp_path) == ["mipr"]


def test_the_marker_lists_every_file_written(tmp_path):
    out = tmp_path / "mipr"
    assert run_cli(["export", "mipr", str(out)]) == 0
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MARKER}
    assert written_files(out) == files and "README.md" in files and len(files) == 4


def test_an_export_marked_by_an_older_version_is_not_replaced(tmp_path, capsys):
    out = tmp_path / "mipr"
    assert run_cli(["export", "mipr", str(out)]) == 0
    (out / MARKER).write_text("Written by `mmrhub export`; `mmrhub export --overwrite` may replace this folder.\n")
    assert run_cli(["export", "mipr", str(out), "--overwrite"]) == 1
    assert "was written by an older `mmrhub export` that did not list its files" in capsys.readouterr().err
    assert (out / "README.md").is_file()


def test_a_replaced_export_left_by_a_killed_swap_is_cleared(tmp_path):
    assert run_cli(["export", "mipr", str(tmp_path / "mipr")]) == 0
    left = tmp_path / ".mipr.old-999999999-abcdef01"  # what a kill between the two renames leaves (a dead pid)
    shutil.copytree(tmp_path / "mipr", left)
    kept = tmp_path / ".mipr.old-999999998-abcdef02"  # the same name, but not a folder an export made
    kept.mkdir()
    (kept / "mine.txt").write_text("mine")
    assert run_cli(["export", "mipr", str(tmp_path / "mipr"), "--overwrite"]) == 0
    assert not left.exists() and (kept / "mine.txt").read_text() == "mine"


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
