"""The Qwen3-VL tests (tests/retrieve/rerank/test_qwen3vl.py and test_qwen3vl_shared_prefix.py) in the interpreter CI
gives them: Qwen3-VL's processors need torchvision, which pins a torch other than the main environment's; .ci/run
builds that venv and exports MMRHUB_QWEN3VL_PYTHON, with qwen-vl-utils (the authors' image preparation, to compare
ours with)."""

import os
import subprocess

import pytest
from _paths import ROOT

PYTHON = os.environ.get("MMRHUB_QWEN3VL_PYTHON")


@pytest.mark.slow
@pytest.mark.skipif(not PYTHON, reason="MMRHUB_QWEN3VL_PYTHON unset: no venv with torchvision (.ci/run builds one)")
def test_qwen3vl_tests_pass_with_torchvision():
    tests = [
        ROOT / "tests" / "retrieve" / "rerank" / name for name in ("test_qwen3vl.py", "test_qwen3vl_shared_prefix.py")
    ]
    command = [PYTHON, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *map(str, tests)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    # every test ran: a missing torchvision or qwen-vl-utils in that venv would otherwise pass as skips
    assert " skipped" not in done.stdout, done.stdout[-3000:]
