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


# As the console script runs the command (``[project.scripts]``): nothing of mmrhub before ``mmrhub.cli``.
_CONSOLE = "import re, sys; from mmrhub.cli import console; console()"


def interrupted(argv: list, delay: float, timeout: float = 60, from_start: bool = False) -> tuple:
    """(exit code, stdout, stderr) of ``mmrhub argv`` sent SIGINT ``delay`` seconds after it said "ready" (or
    ``from_start``: after it was started, as the console script runs it); a child that ended first (or was
    stopping: Python ignores SIGINT while it shuts down) gives its own."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE if from_start else _CHILD, *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    if not from_start:
        assert child.stdout.readline() == "ready\n"
    time.sleep(delay)
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=timeout)
    return child.returncode, out, err


def interrupted_or_done(code: int, out: str, err: str) -> bool:
    """Whether a child sent Ctrl-C either stopped with one line and exit 130 or had finished its work whole."""
    return (code, err) == (130, "mmrhub: interrupted\n") or (code == 0 and out.startswith("| System |"))


# A Ctrl-C at a chosen point, from the interpreter's start: when ``module`` is first imported (``argv[1]``), or inside
# a weakref callback during report's build (Python prints the exception there and carries on: "swallowed"), or in
# an import that a C extension turns into an ImportError ("import error"). The command's argv follows.
_TRIP = """
import os, signal, sys, time

MODULE, HOW = sys.argv[1:3]

def ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)  # the handler runs here, as Python checks for signals


class Trip:
    def find_spec(self, name, path, target=None):
        if name == MODULE:
            sys.meta_path.remove(self)
            if HOW == "import error":
                try:
                    ctrl_c()
                except KeyboardInterrupt:
                    raise ImportError(f"partially initialized module {name!r}") from None
            ctrl_c()
        return None


sys.meta_path.insert(0, Trip())
if HOW == "swallowed":
    import weakref
    import mmrhub.report.build as build

    built = build.build_report

    def build_report(*args, **kwargs):
        class Thing:
            pass

        thing = Thing()
        keep = weakref.ref(thing, lambda ref: ctrl_c())
        del thing  # the callback's exception is printed and dropped
        return built(*args, **kwargs)

    build.build_report = build_report
sys.argv[1:] = sys.argv[3:]
from mmrhub.cli import console
console()
"""


def interrupted_at(module: str, how: str, argv: list, timeout: float = 60) -> tuple:
    """(exit code, stdout, stderr) of ``mmrhub argv`` sent Ctrl-C when ``module`` is imported (``how``: "plain",
    "import error") or in a weakref callback during report's build (``how``: "swallowed", ``module`` unused)."""
    result = subprocess.run(
        [sys.executable, "-c", _TRIP, module, how, *map(str, argv)], capture_output=True, text=True, timeout=timeout
    )
    return result.returncode, result.stdout, result.stderr
