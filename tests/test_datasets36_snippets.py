"""Code run on datasets 3.6 frees what it made before the interpreter's exit (tests/_datasets36.py)."""

import os

from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36

HELD_AT_EXIT = """
import atexit, sys, weakref
import pyarrow as pa

class Held:
    table = pa.table({"x": [1, 2]})

held = Held()
alive = weakref.ref(held)
atexit.register(lambda: print("alive at exit:", alive() is not None, sys.argv[1:]))
"""


@needs_datasets36
def test_a_snippets_objects_are_freed_before_the_exit():
    result = run_datasets36(HELD_AT_EXIT, "a", 2, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "alive at exit: False ['a', '2']"
