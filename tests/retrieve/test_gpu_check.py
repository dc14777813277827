"""bench/gpu_check.py's checks: a run of NaN or constant vectors or scores fails with one line saying which; the GPU
samples of a phase are its own."""

import json
import sys

import numpy as np
import pytest
from _paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
pytest.importorskip("torch")
import gpu_check  # noqa: E402


def write_run(path, scores):
    entries = [
        {"qid": str(q), "ranked": [{"did": f"p{i}", "score": s} for i, s in enumerate(row)]}
        for q, row in enumerate(scores)
    ]
    path.write_text(json.dumps(entries))
    return path


def check(run, cache_dir=None):
    gpu_check.main(["vectors", str(run)] + (["--cache-dir", str(cache_dir)] if cache_dir else []))


def test_varied_vectors_and_scores_pass(tmp_path, capsys):
    entry = tmp_path / "cache" / "key"
    entry.mkdir(parents=True)
    vectors = np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32)
    np.save(entry / "embeddings.npy", vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    check(write_run(tmp_path / "run.json", [[0.9, 0.5, 0.1], [0.7, 0.6, 0.2]]), tmp_path / "cache")
    assert '"rows": 5' in capsys.readouterr().out


def test_constant_or_nan_vectors_fail(tmp_path):
    entry = tmp_path / "cache" / "key"
    entry.mkdir(parents=True)
    np.save(entry / "embeddings.npy", np.tile(np.float32([0.6, 0.8]), (4, 1)))
    run = write_run(tmp_path / "run.json", [[0.9, 0.5], [0.7, 0.6]])
    with pytest.raises(SystemExit, match=r"corpus embeddings .*embeddings.npy: all 4 rows are the same"):
        check(run, tmp_path / "cache")
    vectors = np.ones((3, 2), np.float32)
    vectors[1, 0] = np.nan
    np.save(entry / "embeddings.npy", vectors)
    with pytest.raises(SystemExit, match="holds 1 NaN or infinite values"):
        check(run, tmp_path / "cache")
    with pytest.raises(SystemExit, match="no embeddings.npy under"):
        check(run, tmp_path / "empty")


def test_constant_scores_fail(tmp_path):
    with pytest.raises(SystemExit, match="scores of .*run.json: all 3 rows are the same"):
        check(write_run(tmp_path / "run.json", [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]))


def test_a_phase_takes_only_its_own_gpu_samples(tmp_path):
    samples = tmp_path / "util.csv"
    samples.write_text(
        "2026/12/04 16:00:00.000, 0\n2026/12/04 16:00:00.100, 80\n2026/12/04 16:00:00.200, 100\n"
        "2026/12/04 16:00:05.000, 7\n[N/A]\n"
    )
    from datetime import datetime

    start = datetime(2026, 12, 4, 16, 0, 0, 50000).timestamp()
    mean, busy, count = gpu_check.utilisation(str(samples), start, start + 1)
    assert (mean, busy, count) == (90.0, 1.0, 2)
    assert gpu_check.utilisation(str(tmp_path / "none.csv"), start, start + 1) == (None, None, 0)
