"""The README names only what exists: every file and folder of the repository it names, every `mmrhub` subcommand
it shows, and every option it gives one."""

import argparse
import re

import pytest
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")
ROOTS = ("tests", "scripts", "bench", "docs", "data", "metrics", "mmrhub", ".ci")
# A path of the repository: one of its top folders, not inside another path ($HF_HOME/mmrhub/...) or a placeholder.
REPO_PATH = re.compile(r"(?<![\w/.$<>-])((?:%s)/[\w./*{},-]*)" % "|".join(re.escape(root) for root in ROOTS))
# A module named bare (top-level, or in the layout's tree), not a citation of another repository's file (name.py:123).
MODULE = re.compile(r"(?<![\w/.*-])(\w+\.py)(?![\w:/])")
COMMAND = re.compile(r"\bmmrhub (?!command\b)([a-z][\w-]*)")  # "the mmrhub command" is prose
CODE = re.compile(r"```\w*\n(.*?)```|`([^`]+)`", re.S)  # fenced blocks, then inline spans


def expanded(path: str) -> list:
    """``tests/builders/{mipr,m2kr}/`` as the paths it stands for."""
    match = re.search(r"\{([^}]*)\}", path)
    if not match:
        return [path]
    return [p for part in match.group(1).split(",") for p in expanded(path.replace(match.group(0), part, 1))]


def named_paths() -> set:
    """Every repository path the README names, and its bare module names."""
    return {match.rstrip(".,;:)") for match in REPO_PATH.findall(README)}


def exists(path: str) -> bool:
    return all(list(ROOT.glob(one)) if "*" in one else (ROOT / one).exists() for one in expanded(path))


def module_exists(name: str) -> bool:
    """A bare name: top-level, or in one of the repository's folders."""
    return (ROOT / name).is_file() or any(next((ROOT / root).rglob(name), None) for root in ROOTS)


def test_every_path_the_readme_names_exists():
    paths, modules = named_paths(), set(MODULE.findall(README))
    assert {
        "tests/commands/test_evaluate.py",
        "tests/export/test_mteb_layout_mteb1.py",
        "tests/builders/{mipr,m2kr}/",
    } <= paths
    assert {"mipr.py", "m2kr_archive.py", "cli.py", "writing.py"} <= modules and len(paths) > 30
    assert sorted(path for path in paths if not exists(path)) == []
    assert sorted(name for name in modules if not module_exists(name)) == []
    assert not exists("tests/test_cli_evaluate.py") and not module_exists("test_cli_evaluate.py")  # the check bites


def subcommands(parser: argparse.ArgumentParser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def code_spans() -> list:
    """Each fenced line and each inline span of code, comments cut."""
    spans = []
    for block, inline in CODE.findall(README):
        spans += block.splitlines() if block else [inline.replace("\n", " ")]
    return [span.split(" # ")[0].split("  #")[0] for span in spans]


def test_every_mmrhub_command_and_its_options_exist():
    commands = subcommands(build_parser())
    shown = set(COMMAND.findall(README))
    assert {"evaluate", "compare", "report", "export", "push", "reproduce", "baseline"} <= shown
    assert sorted(shown - set(commands)) == []
    checked = 0
    for span in code_spans():
        for match in COMMAND.finditer(span):
            words = span[match.end() :].split("|")[0].split()
            parser = commands[match.group(1)]
            choices = (
                subcommands(parser) if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions) else {}
            )
            if words and words[0] in BENCHMARKS and words[0] in choices:
                parser = choices[words[0]]
            known = {flag for action in parser._actions for flag in action.option_strings}
            for word in words:
                flag = word.strip("[]").split("=")[0]
                if flag.startswith("--"):
                    assert flag in known, f"{span!r}: mmrhub {match.group(1)} has no {flag}"
                    checked += 1
    assert checked > 20


@pytest.mark.parametrize("jargon", ["readings", "wings", "vouch", "the family"])
def test_the_readme_speaks_plainly(jargon):
    assert jargon not in README.lower()
