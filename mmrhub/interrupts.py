"""Ctrl-C at any moment of an ``mmrhub`` command: one line and exit 130, the imports included.

``cli`` imports this first, before the imports that take about a second (numpy, pyarrow, datasets). From then on
a Ctrl-C that no code catches (``main`` catches those of the work itself) ends the process here instead of in a
``KeyboardInterrupt`` traceback and exit -2.
"""

import os
import sys

MESSAGE = b"mmrhub: interrupted\n"
EXIT = 130  # 128 + SIGINT, what a shell reports for a program stopped by Ctrl-C


def _uncaught(kind, value, tb, previous=sys.excepthook):
    if not issubclass(kind, KeyboardInterrupt):
        return previous(kind, value, tb)
    os.write(2, MESSAGE)
    os._exit(EXIT)


sys.excepthook = _uncaught
