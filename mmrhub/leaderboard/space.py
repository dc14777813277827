"""A board folder as a Gradio Space: ``app.py``, ``requirements.txt``, ``README.md`` with the Space's YAML, and the
scoring code itself.

The Space runs a copy of the very modules that scored its entries, written into its folder (``mmrhub/`` and the
format modules beside it): ``python app.py`` imports them from there, as a Space does, with only
``requirements.txt``'s packages installed. A copy rather than a requirement naming mmrhub: an upload is scored by
the code the board was built with, whatever is published later; no package index has to hold mmrhub; and it works
offline. Which modules: those importing the board's own modules imports (found by importing them in a fresh
interpreter), and the whole leaderboard package."""

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import mmrhub
from mmrhub.declaration import Benchmark
from mmrhub.leaderboard.board import Board
from mmrhub.metrics import METRICS

APP = Path(mmrhub.__file__).resolve().parent / "leaderboard_app.py"  # the Space's app.py
# What the app imports besides the standard library and gradio (the Space's SDK installs gradio itself, its OAuth
# extra too where the card asks for OAuth; listed here so that a plain `pip install -r requirements.txt` has them).
REQUIREMENTS = ("numpy", "pyarrow>=15", "xxhash", "huggingface_hub", "authlib", "itsdangerous")
# The board's modules whose imports the Space needs (its page imports gradio and is copied with its package).
ENTRY_MODULES = (
    "mmrhub.benchmarks",
    "mmrhub.leaderboard.live",
    "mmrhub.leaderboard.html",
    "mmrhub.leaderboard.pull_request",
)
OAUTH_SCOPES = ("write-discussions",)  # opening a pull request on the user's behalf


def sdk_version(benchmark: Benchmark) -> str:
    """The gradio version the metric Spaces are tested with: their card's ``sdk_version``, one source."""
    card = (METRICS / benchmark.name / "README.md").read_text(encoding="utf-8")
    return re.search(r"^sdk_version: (\S+)$", card, re.M).group(1)


def card(benchmark: Benchmark, board: Board) -> str:
    """The Space's README.md: its YAML (gradio SDK, OAuth to open pull requests) and what the board is."""
    scopes = "".join(f"\n- {scope}" for scope in OAUTH_SCOPES)
    repo = board.judgments.get("repo")
    where = (
        f"the judgment tables of the dataset repo {repo} at commit {board.judgments['revision']} (fetched into "
        "`judgments/` when the Space starts, each checked by its sha256)"
        if repo
        else f"the judgments in `judgments/` (source: {board.judgments.get('source', '')})"
    )
    sample = (
        f"\n\n**The bundled {benchmark.title} sample, not the benchmark: the numbers mean nothing.**"
        if board.sample
        else ""
    )
    return f"""---
title: {json.dumps(f"{benchmark.title} leaderboard")}
emoji: 🏆
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: {sdk_version(benchmark)}
app_file: app.py
pinned: false
hf_oauth: true
hf_oauth_scopes:{scopes}
tags:
- leaderboard
- {benchmark.name}
---

# {benchmark.title} leaderboard

Runs scored exactly as `mmrhub evaluate` scores them, against {where}, compared pair by pair as
`mmrhub compare` compares them ({board.permutations} sign flips, seed {board.seed}, {board.correction}
correction). One file per entry in `results/`.{sample}

Add a run on the page (upload it, then open a pull request with your Hub login), or in a clone of this Space:

```bash
mmrhub leaderboard add . RUN.json --name NAME
mmrhub push . ORG/NAME
```

`app.py` runs the copy of mmrhub {board.mmrhub}'s scoring code in `mmrhub/` (and the format modules beside it), so
uploads are scored by the code that scored the entries.
"""


def code_modules() -> dict:
    """{dotted name: source file} of every module of mmrhub's distribution the Space imports: the closure of
    ``ENTRY_MODULES`` in a fresh interpreter, and the leaderboard package whole."""
    script = (
        "import json, sys\n"
        f"for name in {list(ENTRY_MODULES)!r}: __import__(name)\n"
        "print(json.dumps({n: getattr(m, '__file__', None) for n, m in list(sys.modules.items())}))"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    if found.returncode:
        raise RuntimeError(f"cannot list the modules the Space needs: {found.stderr.strip().splitlines()[-1:]}")
    ours = top_level_names()
    modules = {
        name: file
        for name, file in json.loads(found.stdout).items()
        if file and name.split(".")[0] in ours and file.endswith(".py")
    }
    package = Path(mmrhub.__file__).resolve().parent / "leaderboard"
    modules.update(
        {f"mmrhub.leaderboard.{path.stem}": str(path) for path in package.glob("*.py") if path.stem != "__init__"}
    )
    modules["mmrhub.leaderboard"] = str(package / "__init__.py")
    return modules


def top_level_names() -> set:
    """The importable names mmrhub's distribution installs: ``mmrhub`` and the builders' modules beside it."""
    try:
        listed = metadata.distribution("mmrhub").read_text("top_level.txt")
    except metadata.PackageNotFoundError:
        raise RuntimeError("mmrhub is not installed: install it (pip install .) to build a board.") from None
    return set((listed or "mmrhub").split())


def destination(name: str, source: str) -> str:
    """Where a module goes in the Space, by its dotted name (a package's ``__init__.py`` in its folder)."""
    base = name.replace(".", "/")
    return f"{base}/__init__.py" if Path(source).name == "__init__.py" else f"{base}.py"


def write_space(folder: Path, benchmark: Benchmark, board: Board) -> None:
    """The Space's own files in ``folder`` (being built): app.py, requirements.txt, README.md and the code."""
    (folder / "app.py").write_text(APP.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "requirements.txt").write_text("\n".join(REQUIREMENTS) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(card(benchmark, board), encoding="utf-8")
    for name, source in sorted(code_modules().items()):
        target = folder / destination(name, source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(Path(source).read_bytes())
