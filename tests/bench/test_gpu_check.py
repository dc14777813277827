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


def test_a_reranks_unscored_tail_is_left_out(tmp_path, capsys, monkeypatch):
    """A rerank with --top-n leaves the rest of each pool unscored (None): the checks take the scored head."""
    check(write_run(tmp_path / "run.json", [[0.9, 0.5, None], [0.7, 0.6, None]]))
    assert '"rows": 2' in capsys.readouterr().out
    monkeypatch.setenv("AGREEMENT", str(tmp_path / "agreement.jsonl"))
    other = write_run(tmp_path / "other.json", [[0.9, 0.5000001, None], [0.7, 0.6, None]])
    gpu_check.main(["agree", str(tmp_path / "run.json"), str(other)])
    (row,) = [json.loads(line) for line in (tmp_path / "agreement.jsonl").read_text().splitlines()]
    assert (row["pairs"], row["queries_ranked_alike"]) == (4, 2)
    assert row["largest_score_difference"] == pytest.approx(1e-7)


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


# --- PreFLMR end to end at M2KR's full size (PARTS=preflmr-full), on CPU with the tiny layout ---------------------


def test_preflmr_full_runs_the_retrieval_baseline_m2kr_paper_runs(tmp_path, monkeypatch, capsys):
    """The checkpoint and synthetic M2KR data (preflmr-setup --data), then the pipeline with the options
    ``baseline m2kr --paper`` makes (float32, the preflmr preset, exact MaxSim top-50): its run, record and phases,
    which the phase and vectors steps then read."""
    monkeypatch.setenv("SUMMARY", str(tmp_path / "summary.jsonl"))
    work, stats = tmp_path / "work", tmp_path / "stats.json"
    gpu_check.main(["preflmr-setup", str(work), "--size", "tiny", "--device", "cpu"] + ["--passages", "40"])
    assert (work / "m2kr-real" / "challenge_passage").is_dir()  # the pipeline step's folder, by default
    gpu_check.main(["preflmr-setup", str(work), "--size", "tiny", "--device", "cpu", "--passages", "48"] + FULL)
    gpu_check.main(["preflmr-full", str(work), "--device", "cpu", "--workers", "0", "--stats", str(stats)])
    (run,) = (work / gpu_check.FULL_RUNS).glob("m2kr_*_top50.json")
    record = json.loads(run.with_name(run.name + ".meta.json").read_text())
    assert (record["preset"], record["backend"], record["model"]["dtype"]) == ("preflmr", "preflmr", "torch.float32")
    assert record["options"]["top_k"] == 50 and record["data"]["corpus"]["count"] == 48
    phases = json.loads(stats.read_text())["phases"]
    assert (phases["embed corpus"]["items"], phases["embed queries"]["items"]) == (48, 8)
    gpu_check.main(["phase", "preflmr tiny full m2kr float32", str(stats), str(tmp_path / "none.csv")])
    rows = [json.loads(line) for line in (tmp_path / "summary.jsonl").read_text().splitlines()]
    assert [(row["label"], row["items"], row["estimate"]) for row in rows] == [
        ("preflmr tiny full m2kr float32, embed corpus", 48, None),
        ("preflmr tiny full m2kr float32, embed queries", 8, None),
        ("preflmr tiny full m2kr float32, search", 8, None),
    ]
    gpu_check.main(["vectors", str(run)])
    assert 'vectors ok: {"run scores"' in capsys.readouterr().out


FULL = ["--queries", "8", "--data", "m2kr-full"]


def test_preflmr_estimates_follow_the_dtype():
    sys.path.insert(0, str(ROOT / "bench"))
    import flop_model

    full = "preflmr vit-g full m2kr float32"
    assert gpu_check.estimate_for(full, "embed queries") == flop_model.preflmr_query().per_second(
        flop_model.SUSTAINED_FP32_TFLOPS
    )
    assert gpu_check.estimate_for(full, "embed corpus") == flop_model.preflmr_passage().per_second(
        flop_model.SUSTAINED_FP32_TFLOPS
    )
    assert gpu_check.estimate_for("preflmr vit-g m2kr", "embed corpus") == flop_model.preflmr_passage().per_second(
        flop_model.SUSTAINED_FP32_TFLOPS
    )  # the preset's float32
    assert gpu_check.estimate_for("preflmr vit-g m2kr bfloat16", "embed corpus") == (
        flop_model.preflmr_passage().per_second()
    )
    assert gpu_check.estimate_for("preflmr tiny full m2kr float32", "embed corpus") is None


def test_a_step_timed_out_or_skipped_makes_the_check_fail_naming_it(tmp_path, monkeypatch, capsys):
    """The summary is written whatever happened, and the check exits 1 unless every step ran to its end: a step
    that timed out or was skipped for the budget left figures missing."""
    steps = tmp_path / "steps.jsonl"
    rows = [("data", "ok"), ("rerank 2b mipr shared", "timed out"), ("build 8b reranker", "skipped")]
    rows += [("preflmr tiny full m2kr float32", "failed")]
    steps.write_text("".join(json.dumps({"step": n, "status": s, "seconds": 1}) + "\n" for n, s in rows))
    (tmp_path / "summary.jsonl").write_text("")
    monkeypatch.setenv("SUMMARY", str(tmp_path / "summary.jsonl"))
    monkeypatch.setenv("STEPS", str(steps))
    monkeypatch.setenv("AGREEMENT", str(tmp_path / "none.jsonl"))
    with pytest.raises(SystemExit) as exit_:
        gpu_check.main(["summary", str(tmp_path / "summary.json")])
    assert exit_.value.code == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        "gpu_check: 3 step(s) did not run to their end: rerank 2b mipr shared (timed out), build 8b reranker "
        "(skipped: the budget was spent), preflmr tiny full m2kr float32 (failed); their figures are missing (the log "
        "above says why)"
    )
    assert [step["status"] for step in json.loads((tmp_path / "summary.json").read_text())["steps"]] == [
        "ok",
        "timed out",
        "skipped",
        "failed",
    ]
    rows[1:] = []
    steps.write_text(json.dumps({"step": "data", "status": "ok", "seconds": 1}) + "\n")
    gpu_check.main(["summary", str(tmp_path / "summary.json")])  # every step ran: no exit


def test_the_estimate_of_each_reranker_path(tmp_path):
    """A rerank's label names its path: the shared prefix's estimate spreads the query's prefix over its
    candidates, and with one candidate costs what the whole pair costs."""
    whole = gpu_check.estimate_for("rerank 8b mipr whole", "rerank")
    shared = gpu_check.estimate_for("rerank 8b mipr shared", "rerank")
    assert 1.9 < shared / whole < 2.0
    assert gpu_check.estimate_for("rerank 8b mipr shared", "rerank", candidates=1) == pytest.approx(whole, rel=1e-12)
    assert gpu_check.estimate_for("rerank 8b mipr", "rerank") == whole
