"""Ctrl-C at any moment of a command exits 130 with one line: during the imports, the reading and the scoring."""

import subprocess
import sys

import pytest
from _interrupt_helpers import interrupted
from _interrupt_helpers import interrupted_at
from _interrupt_helpers import interrupted_or_done
from _paths import MIPR_EMBEDDING

INTERRUPTED = "mmrhub: interrupted\n"


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.3, 0.8])
def test_ctrl_c_during_start_up_exits_130_with_one_line(delay):
    code, out, err = interrupted(["evaluate", "mipr", MIPR_EMBEDDING], delay)
    assert interrupted_or_done(code, out, err), (code, err)
    if delay == 0.0:  # the imports alone take far longer
        assert (code, err) == (130, INTERRUPTED)


def test_ctrl_c_after_the_work_is_done_leaves_the_command_s_exit_code():
    """Once main has returned, a Ctrl-C is ignored: Python's shutdown would put the default handler back, and a
    Ctrl-C landing then killed a finished command (exit -2, no line; seen once in .ci/run at delay 0.3 above)."""
    probe = (
        "import os, signal, mmrhub.interrupts as interrupts; interrupts.finished(); "
        "os.kill(os.getpid(), signal.SIGINT); print('done', flush=True)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\n", "")


def test_the_handler_is_in_before_the_heavy_imports():
    # -X importtime lists modules as they finish loading: the handler must come before numpy, pyarrow and datasets
    # (which a command's module imports when its parser is built)
    probe = "import mmrhub.cli as cli; cli.build_parser(('evaluate',))"
    trace = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe], capture_output=True, text=True, timeout=60
    ).stderr
    loaded = [line.rsplit("|", 1)[-1].strip() for line in trace.splitlines() if line.startswith("import time:")]
    assert loaded.index("mmrhub.interrupts") < min(loaded.index(name) for name in ("numpy", "pyarrow"))
    first_of_mmrhub = next(name for name in loaded if name.startswith("mmrhub."))
    assert first_of_mmrhub == "mmrhub.interrupts"


@pytest.mark.parametrize("module", ["argparse", "mmrhub.commands.evaluate", "numpy", "pyarrow"])
def test_ctrl_c_at_each_import_of_the_command_exits_130_with_one_line(module):
    # from the interpreter's start, as the console script runs: argparse came before the handler once
    code, out, err = interrupted_at(module, "plain", ["evaluate", "mipr", MIPR_EMBEDDING])
    assert (code, out, err) == (130, "", INTERRUPTED)


def report_argv(tmp_path):
    return ["report", "mipr", MIPR_EMBEDDING, "-o", tmp_path / "page.html", "--queries", "2"]


@pytest.mark.slow
def test_ctrl_c_that_a_callback_swallows_still_ends_report_with_130_and_no_page(tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = interrupted_at("-", "swallowed", report_argv(tmp_path))
    assert code == 130 and err.endswith(INTERRUPTED) and err.count("\n") == len(err.splitlines()), err
    assert "Traceback" not in err and "Exception ignored" not in err and "KeyboardInterrupt" not in err, err
    assert not (tmp_path / "page.html").exists() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ctrl_c_that_an_import_turns_into_an_import_error_is_still_an_interruption(tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = interrupted_at("matplotlib", "import error", report_argv(tmp_path))
    assert (code, err) == (130, INTERRUPTED) and not list(tmp_path.iterdir())
