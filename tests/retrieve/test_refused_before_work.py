"""What retrieve and rerank can check before any work is checked first, in one line naming the option: a CUDA
device where there is none, a cache folder that is a file, a candidates run that is not there or that lacks judged
queries (the advice names only what the command takes), and ``--search faiss`` without faiss. No model is loaded:
each case fails before the data or the model (the model named here does not exist)."""

import importlib.util
import json

import pytest
from _paths import MIPR_EMBEDDING

from mmrhub.cli import main

pytest.importorskip("torch")

MODEL = "/no/such/model"  # never loaded: every case is refused before


def refused(capsys, argv: list) -> str:
    assert main(list(map(str, argv))) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("command", ["retrieve", "rerank"])
def test_a_cuda_device_where_there_is_none_is_one_line(command, tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    extra = ["--candidates", MIPR_EMBEDDING] if command == "rerank" else []
    line = refused(capsys, [command, "mipr", "--model", MODEL, "--device", "cuda", "-o", tmp_path / "r.json", *extra])
    assert line.startswith(f"mmrhub {command}: error: --device cuda: CUDA is not available here (torch ")
    assert line.endswith("; give --device cpu, or leave --device out to run where CUDA is.")


@pytest.mark.parametrize("command", ["retrieve", "rerank"])
@pytest.mark.parametrize("below", ["", "/entries"])
def test_a_cache_folder_that_is_a_file_is_one_line(command, below, tmp_path, capsys):
    afile = tmp_path / "cache.txt"
    afile.write_text("mine\n")
    extra = ["--candidates", MIPR_EMBEDDING] if command == "rerank" else []
    argv = [command, "mipr", "--model", MODEL, "--cache-dir", f"{afile}{below}", "-o", tmp_path / "r.json", *extra]
    assert refused(capsys, argv) == (
        f"mmrhub {command}: error: --cache-dir {afile}{below}: {afile} is a file, not a folder, so nothing could be "
        "cached; give a folder (made if missing), or leave --cache-dir out for $HF_HOME/mmrhub."
    )
    assert afile.read_text() == "mine\n"


@pytest.mark.parametrize("command", ["retrieve", "rerank"])
def test_a_candidates_run_that_is_not_there_is_one_line(command, tmp_path, capsys):
    gone = tmp_path / "pool.json"
    argv = [command, "mipr", "--model", MODEL, "--candidates", gone, "-o", tmp_path / "r.json"]
    assert refused(capsys, argv) == (
        f"mmrhub {command}: error: --candidates {gone}: no such file; give the run whose rankings are the pools (e.g. "
        "a retrieve run, runs/<benchmark>_<model>.json)."
    )


def test_candidates_lacking_judged_queries_advise_only_what_rerank_takes(tmp_path, capsys):
    short = tmp_path / "short.json"
    short.write_text(json.dumps(json.loads(MIPR_EMBEDDING.read_text())[:-2]))
    argv = ["rerank", "mipr", "--model", MODEL, "--candidates", short, "--no-eval", "-o", tmp_path / "r.json"]
    assert main(list(map(str, argv))) == 1
    err = capsys.readouterr().err
    assert "missing from the run" in err and "--missing-queries" not in err
    assert err.rstrip().endswith("Give candidates that rank every judged query (as retrieve writes them).")


def test_search_faiss_without_faiss_is_said_before_the_model_loads(tmp_path, capsys, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "faiss" else find_spec(name, *a))
    argv = ["retrieve", "mipr", "--model", MODEL, "--search", "faiss", "-o", tmp_path / "r.json"]
    assert refused(capsys, argv) == (
        "mmrhub retrieve: error: --search faiss: faiss is not installed (pip install faiss-cpu, or mmrhub's faiss "
        "extra); leave --search out for the exact torch search, which ranks alike."
    )
