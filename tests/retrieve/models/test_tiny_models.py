"""A way in offline: ``scripts/make_tiny_models.py`` writes tiny random checkpoints of the real layouts, and
``retrieve`` runs on them with the bundled sample (here the torchvision-free pair; test_qwen3vl.py runs the Qwen3-VL
pair where torchvision is installed)."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from _paths import ROOT  # noqa: E402
from _retrieve_helpers import retrieve  # noqa: E402

from mmrhub.benchmarks import MIPR  # noqa: E402
from mmrhub.records.random_weights import RANDOM_WEIGHTS  # noqa: E402
from mmrhub.scoring import score  # noqa: E402
from mmrhub.scoring.request import ScoringRequest  # noqa: E402
from mmrhub.scoring.score import read_valid_run  # noqa: E402

rule = score.refuse_run_of_other_data

SCRIPT = ROOT / "scripts" / "make_tiny_models.py"


@pytest.mark.slow
def test_the_script_writes_models_that_retrieve_runs_on(tmp_path, capsys, monkeypatch):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "tiny")], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    made = json.loads((tmp_path / "tiny" / "tiny-models.json").read_text())
    torchvision = made["backend"] == "sentence-transformers"
    assert (
        made["embedding"].endswith("Qwen3-VL-Embedding-tiny")
        if torchvision
        else made["embedding"].endswith("chinese-clip-tiny")
    )
    assert "mmrhub retrieve mipr" in done.stdout and "mmrhub baseline mipr" in done.stdout
    assert f"mmrhub retrieve m2kr --preset preflmr --model {made['preflmr']} --image-processor" in done.stdout
    assert json.loads((tmp_path / made["preflmr"] / "config.json").read_text())["model_type"] == "flmr"
    assert all((tmp_path / made[role] / RANDOM_WEIGHTS).is_file() for role in ("embedding", "reranker"))
    model = tmp_path / made["embedding"]
    capsys.readouterr()
    samples = []  # what the one rule on runs of other data was told: the bundled sample was scored
    monkeypatch.setattr(score, "refuse_run_of_other_data", lambda *args: samples.append(args[3]) or rule(*args))
    path, run, stats = retrieve(tmp_path, "mipr", "--backend", made["backend"], "--model", model, "--top-k", 10)
    assert samples == [True]
    read_valid_run(ScoringRequest(MIPR), MIPR.read_truth(MIPR.sample_dir), path)
    meta = json.loads(path.with_name(path.name + ".meta.json").read_text())
    assert meta["preset"] == ("qwen3-vl-embedding" if torchvision else "chinese-clip")  # from the folder's name
    assert meta["random_weights"] is True  # the run's record carries the folder's mark, and so does its table
    assert (
        f"_{path.stem} is a run of a checkpoint with random weights (its folder holds {RANDOM_WEIGHTS}"
        in capsys.readouterr().out
    )
    assert stats["phases"]["embed corpus"]["items"] == 254


def test_the_gpu_check_and_its_wheels_script_are_valid_bash():
    for name in ("gpu_check.sh", "gpu_wheels.sh"):
        subprocess.run(["bash", "-n", str(ROOT / "bench" / name)], check=True)
