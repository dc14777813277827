"""Code run on datasets 3.6, in the interpreter MMRHUB_DATASETS36_PYTHON names (.ci/run makes that environment;
without it the tests that need it are skipped)."""

import os
import subprocess
import textwrap

import pytest

PYTHON = os.environ.get("MMRHUB_DATASETS36_PYTHON")
needs_datasets36 = pytest.mark.skipif(not PYTHON, reason="set MMRHUB_DATASETS36_PYTHON to a Python with datasets==3.6")


def run_datasets36(code: str, *args, env: dict, cwd=None) -> subprocess.CompletedProcess:
    """``code`` run with ``args`` as its ``sys.argv[1:]``; its output, which the caller checks.

    The code runs inside a function, so that its datasets, tables and streams are freed when it returns: left in
    globals until the interpreter's exit, pyarrow objects can abort it ("terminate called without an active
    exception", datasets#7566 and #7879), as one CI run did after the test's work had passed.
    """
    program = "def snippet():\n" + textwrap.indent(code, "    ") + "\n\nsnippet()\n"
    return subprocess.run(
        [PYTHON, "-c", program, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
