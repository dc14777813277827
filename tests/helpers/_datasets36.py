"""Code run on datasets 3.6, in the interpreter MMRHUB_DATASETS36_PYTHON names (.ci/run makes that environment;
without it the tests that need it are skipped)."""

import os
import subprocess

import pytest

PYTHON = os.environ.get("MMRHUB_DATASETS36_PYTHON")
needs_datasets36 = pytest.mark.skipif(not PYTHON, reason="set MMRHUB_DATASETS36_PYTHON to a Python with datasets==3.6")

# The code runs in a namespace of its own, emptied once it has run: its datasets, tables and streams are freed
# then, not left in globals until the interpreter's exit, where pyarrow objects still alive can abort it
# ("terminate called without an active exception", datasets#7566 and #7879), as one CI run did after the test's
# work had passed. The code itself is run as given, so a traceback names its own lines.
_RUNNER = """
import gc, sys
code = sys.argv.pop(1)
namespace = {"__name__": "__main__"}
exec(compile(code, "<snippet>", "exec"), namespace)
namespace.clear()
gc.collect()
"""


def run_datasets36(code: str, *args, env: dict, cwd=None) -> subprocess.CompletedProcess:
    """``code`` run with ``args`` as its ``sys.argv[1:]``; its output, which the caller checks."""
    return subprocess.run(
        [PYTHON, "-c", _RUNNER, code, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
