"""Ctrl-C at any moment of an ``mmrhub`` command: one line and exit 130, the imports included.

``cli`` imports this first of all, before ``argparse`` and the imports that take about a second (numpy, pyarrow,
datasets). A Ctrl-C raises ``KeyboardInterrupt`` as Python's own handler does, so that what is being written is
cleared on the way out, but it is also remembered: libraries may swallow the exception (a weakref callback prints
it and carries on; a C extension interrupted mid-import becomes an ImportError or AttributeError later), so
``cli.main`` answers 130 whatever the command returned or raised after it, ``writing`` puts no file in place after
it, and the process ends here ``GRACE`` seconds after it in any case. A second Ctrl-C ends it at once. Processes
started by the command (DataLoader workers) get Python's own behaviour.
"""

import _thread
import os
import sys
import time

MESSAGE = b"mmrhub: interrupted\n"
EXIT = 130  # 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C
GRACE = 2.0  # seconds the way out may take (clearing temporaries, a folder being written) before the process ends

_MAIN = os.getpid()
_received = []  # the monotonic time of each Ctrl-C this process received


def received() -> bool:
    """Whether this process was sent Ctrl-C."""
    return bool(_received)


def check() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C came, even if some library swallowed it: before a result is kept."""
    if _received:
        raise KeyboardInterrupt


def end() -> None:
    """Say the one line and end the process with 130, now."""
    os.write(2, MESSAGE)
    os._exit(EXIT)


def finished() -> None:
    """The command's work is done and its output flushed: a Ctrl-C from here to the exit changes nothing, so it is
    ignored. Python's shutdown would otherwise put the default handler back, and a late Ctrl-C would kill a process
    whose work is complete, with no line said."""
    import _signal

    if os.getpid() == _MAIN and _signal.getsignal(_signal.SIGINT) is _on_sigint:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)


def _in_a_child() -> bool:
    process = sys.modules.get("multiprocessing.process")
    return os.getpid() != _MAIN or (process is not None and process.parent_process() is not None)


def _after_grace() -> None:
    time.sleep(GRACE)
    end()


def _on_sigint(signum, frame):
    if _in_a_child():
        raise KeyboardInterrupt
    if _received:
        end()
    _received.append(time.monotonic())
    _thread.start_new_thread(_after_grace, ())  # not threading: its locks may be held by the code interrupted
    raise KeyboardInterrupt


def _uncaught(kind, value, tb, previous=sys.excepthook):
    if issubclass(kind, KeyboardInterrupt) or (_received and not _in_a_child()):
        end()
    return previous(kind, value, tb)


def _unraisable(info, previous=sys.unraisablehook):
    if isinstance(info.exc_value, KeyboardInterrupt) and _received:
        return  # swallowed where it was raised (a callback); the checks above and the grace end the process
    return previous(info)


def _install() -> None:
    import _signal  # the builtin under ``signal``, which would import enum first

    try:
        if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # not where a host set its own
            _signal.signal(_signal.SIGINT, _on_sigint)
    except ValueError:  # imported outside the main thread: only the main thread may set a handler
        pass
    sys.excepthook = _uncaught
    sys.unraisablehook = _unraisable


_install()
