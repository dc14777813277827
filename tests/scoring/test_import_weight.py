"""What a scoring process imports: the modules a whole `evaluate` took time to import without using them stay out
(bench/README.md, "Scoring as a user runs it"), on a first call (empty cache) and a warm one."""

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from mmrhub.cli import COMMANDS
from mmrhub.scoring.judgments import numpy_array

# ... and every other command's module: `mmrhub evaluate` builds only its own parser (cli.commands_of)
OTHER_COMMANDS = tuple(f"mmrhub.commands.{name}" for name in COMMANDS if name != "evaluate")
KEPT_OUT = ("numpy.ma", "importlib.metadata", "pandas", "email", "subprocess", *OTHER_COMMANDS)
PROBE = """
import json, sys
from mmrhub.cli import main
code = main(["evaluate", "mipr", sys.argv[1]])
print(json.dumps({"code": code, "loaded": [name for name in json.loads(sys.argv[2]) if name in sys.modules]}))
"""


def test_a_first_and_a_warm_evaluate_import_none_of_the_unused_modules(tmp_path):
    from _paths import ROOT

    run = ROOT / "data" / "mipr" / "baseline"
    run = sorted(run.glob("*.json"))[0]
    env = {"HF_HOME": str(tmp_path / "hf"), "PATH": "/usr/bin:/bin"}
    for call in ("first", "warm"):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(run), json.dumps(KEPT_OUT)], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr[-2000:]
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result == {"code": 0, "loaded": []}, call


def test_numpy_array_shares_the_arrays_memory_and_refuses_another_width():
    values = np.array([3, 1, 2], np.int32)
    array = numpy_array(values, pa.int32())
    assert array.equals(pa.array([3, 1, 2], pa.int32()))
    assert array.buffers()[1].address == values.ctypes.data
    with pytest.raises(TypeError, match="1-D array of 64-bit values, got int32"):
        numpy_array(values, pa.int64())
