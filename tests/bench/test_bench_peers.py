"""The peers the evaluate bench times mmrhub against (bench/peer_plain.py, bench/peer_pytrec_eval.py) score what
mmrhub scores: their ratios compare equal work."""

import ast
import json
import subprocess
import sys

import pytest
from _paths import ROOT

RUN = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
MEASURES = ["nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10"]


def peer_means(script: str) -> list:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), str(ROOT / "data" / "mipr"), str(RUN)],
        capture_output=True,
        text=True,
        check=True,
    )
    path, means = done.stdout.strip().split(" ", 1)
    assert path == str(RUN)
    return list(ast.literal_eval(means).values())


def test_the_plain_peer_and_the_pytrec_eval_peer_print_mmrhubs_means(tmp_path):
    pytest.importorskip("pytrec_eval")
    done = subprocess.run(
        [sys.executable, "-m", "mmrhub.cli", "evaluate", "mipr", str(RUN), "--k", "10", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        env={"HF_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    (row,) = json.loads(done.stdout)
    ours = [round(row[name] / 100, 4) for name in MEASURES]
    assert ours == [0.5989, 0.634, 0.5926, 0.8889]
    assert peer_means("peer_plain.py") == ours
    assert peer_means("peer_pytrec_eval.py") == ours
