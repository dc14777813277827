"""A ``mmrhub`` child interrupted (SIGINT, as Ctrl-C sends it) a given time after its interpreter has started."""

import os
import signal
import subprocess
import sys
import time

# Python's own start-up and the search for the package come before any code of mmrhub can run; the child says
# "ready" once mmrhub's handler is in (the first thing the command imports: tests/commands/test_interrupts.py), and
# the delay counts from there, so that the imports and the work are what gets interrupted.
_CHILD = "import mmrhub.interrupts; print('ready', flush=True); from mmrhub.cli import console; console()"


def interrupted(argv: list, delay: float, timeout: float = 60) -> tuple:
    """(exit code, stdout, stderr) of ``mmrhub argv`` sent SIGINT ``delay`` seconds after it said "ready"; a child
    that ended first (or was stopping: Python ignores SIGINT while it shuts down) gives its own."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert child.stdout.readline() == "ready\n"
    time.sleep(delay)
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=timeout)
    return child.returncode, out, err


def interrupted_or_done(code: int, out: str, err: str) -> bool:
    """Whether a child sent Ctrl-C either stopped with one line and exit 130 or had finished its work whole."""
    return (code, err) == (130, "mmrhub: interrupted\n") or (code == 0 and out.startswith("| System |"))
