"""Code run on datasets 3.6 frees what it made before the interpreter's exit (tests/helpers/_datasets36.py)."""

import os

from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36

# A table that says when it is freed, and a line printed at exit: left in globals, the table would go after it.
HELD_AT_EXIT = """
import atexit, sys, weakref
import pyarrow as pa

class Held:
    table = pa.table({"x": [1, 2]})

held = Held()
weakref.finalize(held, print, "freed")
atexit.register(print, "at exit", sys.argv[1:])
"""


@needs_datasets36
def test_a_snippets_objects_are_freed_before_the_exit():
    result = run_datasets36(HELD_AT_EXIT, "a", 2, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["freed", "at exit ['a', '2']"]
