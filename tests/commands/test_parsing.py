"""Every mmrhub parser: a mistyped or abbreviated option is refused by the subcommand it was given to, with the
option meant; every default is in the help."""

import argparse
import re

import pytest

from mmrhub.cli import build_parser
from mmrhub.cli import main
from mmrhub.commands import rerank
from mmrhub.commands import retrieve
from mmrhub.commands.parsing import Parser


def every_parser(parser=None, name="mmrhub"):
    """(name, parser) of the mmrhub parser and each subcommand's, depth first."""
    parser = parser or build_parser()
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from every_parser(sub, f"{name} {sub_name}")


def refusal(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    assert exit.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_a_typo_is_refused_by_its_subcommand_with_the_option_meant(capsys):
    err = refusal(capsys, "evaluate", "mipr", "--by-categroy")
    assert err.startswith("usage: mmrhub evaluate mipr ")
    assert err.splitlines()[-1].startswith(
        "mmrhub evaluate mipr: error: unrecognized arguments: --by-categroy (did you mean --by-category"
    )
    err = refusal(capsys, "report", "m2kr", "run.json", "-o", "r.html", "--query-id", "7")
    assert "mmrhub report m2kr: error: unrecognized arguments: --query-id 7 (did you mean --query-ids?)" in err


@pytest.mark.parametrize("prefix", ["--by-cat", "--by-categ", "--by-cat=x"])
def test_no_option_is_taken_from_a_prefix(capsys, prefix):
    err = refusal(capsys, "evaluate", "mipr", prefix)
    assert f"unrecognized arguments: {prefix} (did you mean --by-category?)" in err


def test_a_top_level_typo_and_a_stray_argument(capsys):
    assert "mmrhub: error: unrecognized arguments: --verbos (did you mean --version?)" in refusal(
        capsys, "--verbos", "info", "mipr"
    )
    err = refusal(capsys, "oracle", "mipr", "a.json", "b.json")
    assert err.splitlines()[-1] == "mmrhub oracle mipr: error: unrecognized arguments: b.json"


def test_every_parser_takes_no_abbreviation_and_one_formatter():
    parsers = list(every_parser()) + [
        ("embed_retrieve.py", retrieve.build_parser()),
        ("rerank.py", rerank.build_parser()),
    ]
    assert len(parsers) > 20
    for name, parser in parsers:
        assert isinstance(parser, Parser) and parser.allow_abbrev is False, name
        assert parser.formatter_class.__name__ == "HelpFormatter", name


def option_helps(text: str) -> dict:
    """{each option string: its help text} from a parser's help."""
    helps, current = {}, None
    for line in text.splitlines():
        match = re.match(r"  (-[^ ,]+(?: [A-Z_\[\].,{}a-z0-9-]+)?(?:, -[^ ,]+(?: \S+)?)*)(?:  +(.*))?$", line)
        if match and line.startswith("  -"):
            current = [flag.split(" ")[0] for flag in match.group(1).split(", ")]
            for flag in current:
                helps[flag] = match.group(2) or ""
        elif current and line.startswith("    "):
            for flag in current:
                helps[flag] = f"{helps[flag]} {line.strip()}".strip()
        else:
            current = None
    return helps


def test_help_shows_every_default():
    checked = 0
    for name, parser in every_parser():
        helps = option_helps(parser.format_help())
        for action in parser._actions:
            if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
                continue
            text = helps[action.option_strings[0]]
            assert "default" in text, (name, action.option_strings, text)
            checked += 1
    assert checked > 50
    help = option_helps(build_parser()._subparsers._group_actions[0].choices["retrieve"].format_help())
    assert help["--top-k"] == "ranked ids written per query (default: 100)"
    assert help["--batch-size"] == "inputs per forward pass (default: 32)"
    assert help["--backend"].endswith("(default: sentence-transformers)")
    mipr = build_parser()._subparsers._group_actions[0].choices["evaluate"]._subparsers._group_actions[0]
    assert "'refuse' the run (default)" in option_helps(mipr.choices["mipr"].format_help())["--missing-queries"]


def test_export_help_is_exports_own(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["export", "mipr", "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mmrhub export ")
    assert "Write a benchmark as a script-free Hub dataset repo folder OUT" in out
    assert "the benchmark to export" in out and "(default: hf)" in out
    assert "Load, score and publish" not in out  # not the top-level help
