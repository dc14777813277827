"""No measured timing in a docstring: figures go stale as the code changes, so they live in bench/README.md and
docs/, re-measured there, and a docstring points to them."""

import ast
import re

from _paths import ROOT

# A duration ("0.08 s", "60-200 ms", "21-29 seconds") or a speed ratio ("1.3x slower", "three times as long").
TIMING = re.compile(
    r"\b\d[\d.,]*(?:-\d[\d.,]*)? ?(?:ms|µs|s|sec|seconds|minutes)\b"
    r"|\b\d[\d.]*x (?:faster|slower)\b|\btimes as (?:long|fast)\b|\btenth of a second\b"
)


def docstrings(path):
    """(line, text) of every docstring of a module: its own, each class's and each function's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield getattr(node, "lineno", 1), text


def test_no_docstring_of_the_code_states_a_timing():
    sources = [*sorted((ROOT / "mmrhub").rglob("*.py")), *sorted(ROOT.glob("*.py"))]
    found = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r}"
        for path in sources
        for line, text in docstrings(path)
        for match in TIMING.finditer(text)
    ]
    assert found == []


def test_the_check_sees_a_timing(tmp_path):
    module = tmp_path / "timed.py"
    module.write_text('"""Fast."""\n\n\ndef f():\n    """Took 0.22 s; 1.3x slower than that."""\n')
    assert [match.group(0) for _, text in docstrings(module) for match in TIMING.finditer(text)] == [
        "0.22 s",
        "1.3x slower",
    ]
