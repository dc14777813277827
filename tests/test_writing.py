"""One way out: outputs are written whole (temporary file, fsync, rename), never onto an input, and every error
names the path."""

import errno
import os
import shutil

import pytest
from _paths import ROOT

from mmrhub import writing
from mmrhub.cli import main

SAMPLE = ROOT / "data" / "mipr"
EMBEDDING = SAMPLE / "baseline" / "simulated_embedding_top50.json"


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "mipr"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("images"))
    return folder


def test_json_onto_the_run_being_scored_is_refused_before_any_work(data, capsys):
    run = data / "baseline" / "simulated_embedding_top50.json"
    before = run.read_bytes()
    assert main(["evaluate", "mipr", str(run), "--json", str(run)]) == 1
    err = capsys.readouterr().err
    assert err == f"mmrhub evaluate: error: --json {run}: is {run}, one of this command's inputs; write elsewhere.\n"
    assert run.read_bytes() == before


def test_json_onto_the_judgments_is_refused(data, capsys):
    annotation = data / "mipr_annotation.jsonl"
    before = annotation.read_bytes()
    assert main(["evaluate", "mipr", str(EMBEDDING), "--data-dir", str(data), "--json", str(annotation)]) == 1
    assert "one of this command's inputs; write elsewhere." in capsys.readouterr().err
    assert annotation.read_bytes() == before


def test_a_hard_link_to_an_input_is_the_input(data, capsys, tmp_path):
    run = tmp_path / "run.json"
    shutil.copy(EMBEDDING, run)
    link = tmp_path / "scores.json"
    os.link(run, link)
    assert main(["evaluate", "mipr", str(run), "--json", str(link)]) == 1
    assert f"is {run}, one of this command's inputs" in capsys.readouterr().err


def test_report_onto_a_run_is_refused(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run.json"
    shutil.copy(EMBEDDING, run)
    before = run.read_bytes()
    assert main(["report", "mipr", str(run), "-o", str(run)]) == 1
    assert f"-o {run}: is {run}, one of this command's inputs" in capsys.readouterr().err
    assert run.read_bytes() == before


def test_a_full_disk_keeps_the_previous_file_and_names_it(tmp_path, monkeypatch):
    target = tmp_path / "scores.json"
    target.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as error:
        writing.write_text(target, "new")
    assert str(error.value) == (
        f"[Errno 28] No space left on device writing {target} (the previous file is unchanged); free some space or "
        "write elsewhere."
    )
    assert target.read_text() == "previous" and sorted(p.name for p in tmp_path.iterdir()) == ["scores.json"]


def test_temporaries_of_killed_writes_are_cleared_and_nothing_else(tmp_path):
    target = tmp_path / "scores.json"
    dead = tmp_path / ".scores.json.999999999.abcdef01.tmp"
    dead.write_text("half")
    mine = tmp_path / ".scores.json.notes.tmp"  # not a name the writer makes
    mine.write_text("mine")
    alive = tmp_path / f".scores.json.{os.getpid()}.abcdef02.tmp"  # a write still running
    alive.write_text("busy")
    writing.write_text(target, "{}")
    assert not dead.exists() and mine.read_text() == "mine" and alive.read_text() == "busy"
    assert target.read_text() == "{}"
