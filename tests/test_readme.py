"""The README and the reference pages in docs/ name only what exists: every file and folder of the repository they
name, every module, every `mmrhub` subcommand they show and every option they give one, and every link between them
(its anchor included). Each docs page opens with a table of contents and is linked from the README."""

import argparse
import re
from pathlib import Path

import pytest
from _paths import ROOT

from mmrhub.cli import build_parser

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ROOTS = ("tests", "scripts", "bench", "docs", "data", "metrics", "mmrhub", ".ci")
# A path of the repository: one of its top folders, not inside another path ($HF_HOME/mmrhub/...) or a placeholder.
REPO_PATH = re.compile(r"(?<![\w/.$<>-])((?:%s)/[\w./*{},-]*)" % "|".join(re.escape(root) for root in ROOTS))
# A module named bare (top-level, or in the layout's tree), not a citation of another repository's file (name.py:123).
MODULE = re.compile(r"(?<![\w/.*-])(\w+\.py)(?![\w:/])")
COMMAND = re.compile(r"\bmmrhub (?!command\b)([a-z][\w-]*)")  # "the mmrhub command" is prose
CODE = re.compile(r"```\w*\n(.*?)```|`([^`]+)`", re.S)  # fenced blocks, then inline spans
LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)
FENCED = re.compile(r"```.*?```", re.S)


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def expanded(path: str) -> list:
    """``tests/builders/{mipr,m2kr}/`` as the paths it stands for."""
    match = re.search(r"\{([^}]*)\}", path)
    if not match:
        return [path]
    return [p for part in match.group(1).split(",") for p in expanded(path.replace(match.group(0), part, 1))]


def named_paths(text: str) -> set:
    """Every repository path a page names."""
    return {match.rstrip(".,;:)") for match in REPO_PATH.findall(text)}


def exists(path: str) -> bool:
    return all(list(ROOT.glob(one)) if "*" in one else (ROOT / one).exists() for one in expanded(path))


def module_exists(name: str) -> bool:
    """A bare name: top-level, or in one of the repository's folders."""
    return (ROOT / name).is_file() or any(next((ROOT / root).rglob(name), None) for root in ROOTS)


def subcommands(parser: argparse.ArgumentParser) -> dict:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def code_spans(text: str) -> list:
    """Each fenced line and each inline span of code, comments cut."""
    spans = []
    for block, inline in CODE.findall(text):
        spans += block.splitlines() if block else [inline.replace("\n", " ")]
    return [span.split(" # ")[0].split("  #")[0] for span in spans]


def shown_flags(text: str):
    """(span, command, flag) for every option a code span gives an `mmrhub` subcommand, and the parser it reaches."""
    commands = subcommands(build_parser())
    for span in code_spans(text):
        for match in COMMAND.finditer(span):
            if match.group(1) not in commands:
                continue  # reported as an unknown command
            words = span[match.end() :].split("|")[0].split()
            parser = commands[match.group(1)]
            choices = (
                subcommands(parser) if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions) else {}
            )
            if words and words[0] in choices:  # a benchmark, or a subcommand such as `leaderboard add`
                parser = choices[words[0]]
            known = {flag for action in parser._actions for flag in action.option_strings}
            for word in words:
                flag = word.strip("[]").split("=")[0]
                if flag.startswith("--"):
                    yield span, match.group(1), flag, flag in known


def anchors(text: str) -> set:
    """The anchors of a page's headings, as GitHub makes them (lower case, punctuation dropped, spaces to hyphens,
    repeats numbered)."""
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCED.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        number = 0
        while (slug if not number else f"{slug}-{number}") in found:
            number += 1
        found.add(slug if not number else f"{slug}-{number}")
    return found


def broken_links(text: str, folder: Path) -> list:
    """Links to files that do not exist, or to anchors their page lacks; web addresses are not followed."""
    broken = []
    for target in LINK.findall(FENCED.sub("", text)):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        page = (folder / path) if path else None
        if page is not None and not page.exists():
            broken.append(target)
        elif anchor and anchor not in anchors(page.read_text(encoding="utf-8") if page else text):
            broken.append(target)
    return broken


def problems(text: str, folder: Path) -> list:
    """Everything a page names that does not exist, one line each."""
    found = [f"no path {path}" for path in sorted(named_paths(text)) if not exists(path)]
    found += [f"no module {name}" for name in sorted(set(MODULE.findall(text))) if not module_exists(name)]
    commands = subcommands(build_parser())
    found += [f"no command mmrhub {name}" for name in sorted(set(COMMAND.findall(text)) - set(commands))]
    found += [f"{span!r}: mmrhub {command} has no {flag}" for span, command, flag, ok in shown_flags(text) if not ok]
    found += [f"broken link {target}" for target in broken_links(text, folder)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_every_name_and_link_on_the_page_exists(page):
    assert problems(page.read_text(encoding="utf-8"), page.parent) == []


def test_the_check_sees_each_kind_of_broken_name(tmp_path):
    page = """# A page

See `tests/test_cli_evaluate.py`, `cli_evaluate.py` and [the scoring page](scoring.md#no-such-part).

```bash
mmrhub evaluate mipr RUN --data-dirs DIR
mmrhub evalute mipr RUN
```

![picture](missing.png) and [back](#a-page) and [scoring](scoring.md#run-files).
"""
    assert problems(page, ROOT / "docs") == [
        "no path tests/test_cli_evaluate.py",
        "no module cli_evaluate.py",
        "no command mmrhub evalute",
        "'mmrhub evaluate mipr RUN --data-dirs DIR': mmrhub evaluate has no --data-dirs",
        "broken link scoring.md#no-such-part",
        "broken link missing.png",
    ]


def test_the_checks_find_what_the_pages_name():
    """The patterns match: the pages name known paths, modules, commands and options (a pattern gone blind would
    pass every page)."""
    texts = {page_name(page): page.read_text(encoding="utf-8") for page in PAGES}
    every = "\n".join(texts.values())
    paths, modules = named_paths(every), set(MODULE.findall(every))
    assert {
        "tests/commands/test_evaluate.py",
        "tests/export/test_mteb_layout_mteb1.py",
        "tests/builders/{mipr,m2kr}/",
    } <= paths
    assert {"bench/make_mipr_synthetic.py", "bench/make_m2kr_synthetic.py", "docs/scoring.md"} <= paths
    assert {"mipr.py", "m2kr_archive.py", "cli.py", "writing.py"} <= modules and len(paths) > 30
    shown = set(COMMAND.findall(every))
    assert {"evaluate", "compare", "report", "export", "push", "reproduce", "baseline", "mteb", "rerun"} <= shown
    assert sum(1 for text in texts.values() for _ in shown_flags(text)) > 20
    assert sum(len(LINK.findall(text)) for text in texts.values()) > 40


@pytest.mark.parametrize("page", PAGES[1:], ids=page_name)
def test_each_docs_page_opens_with_its_contents_and_is_linked_from_the_readme(page):
    text = page.read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", FENCED.sub("", text), re.M)
    contents = re.findall(r"^- \[(.+)\]\(#[^)]+\)$", text.split("\n## ", 1)[0], re.M)
    assert text.startswith("# ") and contents == sections and sections
    assert f"]({page_name(page)})" in PAGES[0].read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=page_name)
@pytest.mark.parametrize("jargon", ["readings", "wings", "vouch", "the family"])
def test_the_pages_speak_plainly(page, jargon):
    assert jargon not in page.read_text(encoding="utf-8").lower()


def test_the_readme_opens_with_the_two_commands_for_a_fresh_machine():
    """`.ci/run` and the users' first minutes rely on them: the main job on the bundled sample, then the tests."""
    lines = PAGES[0].read_text(encoding="utf-8").splitlines()
    block = lines[lines.index("```bash") + 1 : lines.index("```")]
    assert len(block) == 2 and block[0].endswith("&& mmrhub evaluate mipr")
    assert block[1].endswith("&& python -m pytest -n auto")
    assert "\npython -m pytest -n auto\n" in (ROOT / ".ci" / "run").read_text()
