"""The install users get: a wheel (not editable) in a fresh venv, used from a folder outside the repository.

.ci/run builds the wheel, installs it into a venv and names that venv's bin/ folder in MMRHUB_WHEEL_BIN; without
it these tests are skipped. They compare the installed package's output with this checkout's.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _paths import ROOT

from mmrhub.cli import main

BIN = os.environ.get("MMRHUB_WHEEL_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="set MMRHUB_WHEEL_BIN to the bin/ of a venv with the mmrhub wheel")


def installed(*argv, cwd, check=True):
    env = {**os.environ, "PYTHONPATH": ""}
    result = subprocess.run(
        [str(Path(BIN) / argv[0]), *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if check and result.returncode:
        raise AssertionError(f"{argv} exited {result.returncode}:\n{result.stderr[-3000:]}")
    return result


def site_file(relative: str, cwd) -> Path:
    code = f"import mmrhub, pathlib; print(pathlib.Path(mmrhub.__file__).parent / {relative!r})"
    return Path(installed("python", "-c", code, cwd=cwd).stdout.strip())


def test_the_package_is_not_the_checkout(tmp_path):
    code = "import mipr, m2kr, mmrhub; print(mipr.__file__, m2kr.__file__, mmrhub.__file__, mipr.SAMPLE_DIR)"
    paths = installed("python", "-c", code, cwd=tmp_path).stdout.split()
    assert all("/site-packages/" in path for path in paths), paths  # (CI's venv may lie inside the checkout)
    assert paths[3].endswith("site-packages/mmrhub/data/mipr")


def test_readme_main_job_prints_the_same_table(tmp_path, capsys):
    out = installed("mmrhub", "evaluate", "mipr", cwd=tmp_path).stdout
    assert main(["evaluate", "mipr"]) == 0
    assert out == capsys.readouterr().out
    assert "| Candidate-pool Oracle |" in out and "Bundled MIPR sample (27 queries)" in out


def test_builders_load_the_bundled_samples(tmp_path):
    code = "import mipr, m2kr; print(len(mipr.load('qrels')), len(m2kr.load('challenge_passage')))"
    assert installed("python", "-c", code, cwd=tmp_path).stdout.split() == ["27", "300"]


def test_every_command_with_and_without_data_dir(tmp_path):
    data_dir = shutil.copytree(ROOT / "data" / "mipr", tmp_path / "mipr")
    run = str(data_dir / "baseline" / "simulated_embedding_top50.json")
    with_dir = installed(
        "mmrhub", "evaluate", "mipr", run, "--data-dir", str(data_dir), "--json", "s.json", cwd=tmp_path
    )
    assert "| simulated_embedding_top50 |" in with_dir.stdout and "Bundled" not in with_dir.stdout
    assert json.loads((tmp_path / "s.json").read_text())["runs"][0]["aggregate"]["num_queries"] == 27
    assert "## qrels (test): 27 rows" in installed("mmrhub", "info", "mipr", cwd=tmp_path).stdout
    m2kr_run = str(site_file("data/m2kr/baseline/simulated_top5.json", tmp_path))
    assert "| simulated_top5 |" in installed("mmrhub", "evaluate", "m2kr", m2kr_run, cwd=tmp_path).stdout
    installed("mmrhub", "export", "mipr", "exported", cwd=tmp_path)
    assert (tmp_path / "exported" / "qrels").is_dir() and (tmp_path / "exported" / "README.md").is_file()
    card = (tmp_path / "exported" / "README.md").read_text(encoding="utf-8")  # the template, package data
    assert "## Dataset Creation" in card and "Released under the Apache License 2.0." in card
    assert "dry run" in installed("mmrhub", "push", "exported", "org/mipr", "--dry-run", cwd=tmp_path).stdout


def test_cli_works_from_inside_a_metric_folder(tmp_path):
    folder = site_file("metrics/mipr", tmp_path)
    assert (folder / "mipr.py").is_file()  # the metric's mipr.py must not shadow the builder's
    assert "| Candidate-pool Oracle |" in installed("mmrhub", "evaluate", "mipr", cwd=folder).stdout


def test_evaluate_loads_the_installed_metric(tmp_path):
    code = (
        "import evaluate; from mmrhub.metrics import METRICS; metric = evaluate.load(str(METRICS / 'm2kr')); "
        "print(metric.compute(predictions=[['a', 'b']], references=[['b']])['Recall@1'])"
    )
    assert installed("python", "-c", code, cwd=tmp_path).stdout.split()[-1] == "0.0"


def test_a_board_built_by_the_wheel_runs_the_installed_code_it_copied(tmp_path):
    run = site_file("data/mipr/baseline/simulated_embedding_top50.json", tmp_path)
    installed("mmrhub", "leaderboard", "mipr", str(run), "-o", "board", cwd=tmp_path)
    board = tmp_path / "board"
    for module in ("scoring/score.py", "metrics/mipr/mipr_measures.py", "leaderboard/page.py"):
        assert (board / "mmrhub" / module).read_bytes() == site_file(module, tmp_path).read_bytes(), module
    # the board's own copy is what its folder imports first, as a Space's app.py does
    code = (
        "import mmrhub; from mmrhub.benchmarks import BENCHMARKS; from mmrhub.leaderboard.live import LiveBoard; "
        "live = LiveBoard(BENCHMARKS['mipr'], '.'); print(mmrhub.__file__); "
        "print(live.standings.entries[0].result['nDCG@10'])"
    )
    origin, value = installed("python", "-c", code, cwd=board).stdout.split()
    assert origin == str(board / "mmrhub" / "__init__.py")
    ours = tmp_path / "ours"
    assert main(["leaderboard", "mipr", str(run), "-o", str(ours)]) == 0
    [result] = (ours / "results").glob("*.json")
    assert float(value) == json.loads(result.read_text())["table"]["nDCG@10"]
