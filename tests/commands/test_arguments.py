"""Argument traps: list options cannot eat run files, numbers are in range, --debug stands anywhere, a closed pipe
ends the command quietly; ``args.benchmark`` is the benchmark's declaration in every command."""

import argparse
import re
import subprocess
import sys

import pytest
from _paths import ROOT

from mmrhub.cli import build_parser
from mmrhub.cli import main
from mmrhub.cli import without_debug
from mmrhub.commands.arguments import scoring_request

EMBEDDING = ROOT / "data" / "mipr" / "baseline" / "simulated_embedding_top50.json"
M2KR_RUN = ROOT / "data" / "m2kr" / "baseline" / "simulated_top5.json"


def test_k_takes_a_comma_list_and_leaves_the_run_alone():
    args = build_parser().parse_args(["evaluate", "mipr", "--k", "5,20", str(EMBEDDING)])
    assert args.k == [5, 20] and args.runs == [str(EMBEDDING)]


def test_variants_take_a_comma_list_and_leave_the_run_alone():
    args = build_parser().parse_args(["evaluate", "m2kr", "--variants", "recall,hit", str(M2KR_RUN)])
    assert args.variants == ["recall", "hit"] and args.runs == [str(M2KR_RUN)]


@pytest.mark.parametrize(
    "value, message",
    [
        ("0", "expected a whole number from 1 to 1,000, got 0"),
        ("-3", "expected a whole number from 1 to 1,000, got -3"),
        ("1001", "expected a whole number from 1 to 1,000, got 1,001"),
        ("5,,10", "expected a comma-separated list without empty elements, got '5,,10'"),
        ("ten", "expected a whole number from 1 to 1,000, got 'ten'"),
    ],
)
def test_bad_cutoffs_are_refused_naming_the_flag(capsys, value, message):
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(["evaluate", "mipr", "--k", value])
    assert exit.value.code == 2
    assert f"argument --k: {message}" in capsys.readouterr().err


VALUES = ["7", " 7 ", "0", "1001", "ten", "2.5", "1_000", "nan", 7, 2.5, 1e300, True, None, float("inf"), [7]]


def outcome(convert, value):
    """What a converter gives: ("value", v), or ("error", its message)."""
    try:
        return "value", convert(value)
    except (ValueError, argparse.ArgumentTypeError) as err:
        return "error", str(err)


@pytest.mark.parametrize("value", VALUES)
def test_the_commands_check_numbers_and_choices_as_the_metric_modules_do(value):
    """The commands' converters stand apart from the metric folders, and accept and refuse alike, in the same
    words: the metric's whole numbers, numbers and choices (``shared``, both folders alike)."""
    from mmrhub.commands import converters
    from mmrhub.metrics.mipr import shared

    pairs = [
        (converters.whole_number(1, 1000), lambda v: shared.whole_number(v, 1, 1000)),
        (converters.real_number(0.0, 1.0), lambda v: shared.real_number(v, 0.0, 1.0)),
        (converters.choice_of(("7", "ten")), lambda v: shared.one_of(v, ("7", "ten"))),
    ]
    for command, metric in pairs:
        assert outcome(command, value) == outcome(metric, value)


def test_each_benchmark_s_cutoffs_are_bounded_by_its_metric_module():
    from mmrhub.benchmarks import BENCHMARKS
    from mmrhub.metrics.m2kr import shared as m2kr_shared
    from mmrhub.metrics.mipr import shared as mipr_shared

    assert BENCHMARKS["mipr"].max_cutoff == mipr_shared.MAX_CUTOFF == 1000
    assert BENCHMARKS["m2kr"].max_cutoff == m2kr_shared.MAX_CUTOFF == 1000


def test_an_unknown_variant_is_refused(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "m2kr", "--variants", "recall,best"])
    assert "argument --variants: 'best' is not one of recall, hit, strict" in capsys.readouterr().err


def test_debug_may_stand_anywhere_before_a_double_dash():
    assert without_debug(["evaluate", "mipr", "--debug", "RUN"]) == (["evaluate", "mipr", "RUN"], True)
    assert without_debug(["evaluate", "mipr", "--", "--debug"]) == (["evaluate", "mipr", "--", "--debug"], False)


def test_debug_after_the_subcommand_shows_the_traceback(capsys, tmp_path):
    missing = tmp_path / "missing.json"
    assert main(["evaluate", "mipr", str(missing), "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and str(missing) in err


def test_a_closed_pipe_ends_quietly():
    script = (
        "import sys; from mmrhub.cli import console; sys.argv = ['mmrhub', 'evaluate', 'mipr', '--per-query']; "
        "console()"
    )
    reader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.close()  # the reader is gone before anything is written, like `| head -c 0`
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 141 and b"Broken pipe" not in err and b"Traceback" not in err


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["evaluate", "mipr", "--data-dir", ""], "--data-dir"),
        (["oracle", "mipr", str(EMBEDDING), "--data-dir", " "], "--data-dir"),
        (["report", "mipr", str(EMBEDDING), "-o", ""], "-o/--output"),
        (["evaluate", "mipr", ""], "RUN"),
        (["export", "mipr", ""], "out"),
        (["evaluate", "mipr", str(EMBEDDING), "--json", ""], "--json"),
    ],
)
def test_an_empty_value_is_refused_not_taken_for_the_sample(capsys, argv, flag):
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: is empty (an unset variable?); give a value or leave the option out" in err


def test_every_text_option_refuses_empty_values():
    from mmrhub.cli import non_empty

    def text_actions(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from text_actions(sub)
            elif action.choices is None and action.nargs != 0 and action.type in (None, non_empty):
                yield action

    actions = list(text_actions(build_parser()))
    assert len(actions) > 30 and all(action.type is non_empty for action in actions)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["retrieve", "mipr", "--top-k", "0"], "argument --top-k: expected a whole number from 1 to 1,000,000, got 0"),
        (["retrieve", "mipr", "--batch-size", "-1"], "argument --batch-size: expected a whole number from 1 to"),
        (
            ["retrieve", "mipr", "--text-weight", "1.5"],
            "argument --text-weight: expected a number from 0.0 to 1.0, got '1.5'",
        ),
        (
            ["retrieve", "mipr", "--text-weight", "nan"],
            "argument --text-weight: expected a number from 0.0 to 1.0, got 'nan'",
        ),
        (["rerank", "mipr", "--candidates", "x", "--top-n", "0"], "argument --top-n: expected a whole number from 1"),
        (
            ["rerank", "mipr", "--candidates", "x", "--chunk-queries", "0"],
            "argument --chunk-queries: expected a whole number",
        ),
        (
            ["baseline", "mipr", "--num-workers", "-2"],
            "argument --num-workers: expected a whole number from 0 to 1,024, got -2",
        ),
        (["baseline", "mipr", "--embedding-batch-size", "0"], "argument --embedding-batch-size: expected a whole"),
        (
            ["retrieve", "mipr", "--max-pixels", "0"],
            "argument --max-pixels: expected a whole number from 1 to 1,000,000,000",
        ),
        (
            ["compare", "mipr", "a", "b", "--permutations", "0"],
            "argument --permutations: expected a whole number from 1 to 1,000,000, got 0",
        ),
        (
            ["compare", "mipr", "a", "b", "--permutations", "10000000000"],
            "argument --permutations: expected a whole number from 1 to 1,000,000, got 10,000,000,000",
        ),
        (
            ["compare", "mipr", "a", "b", "--seed", "-1"],
            "argument --seed: expected a whole number from 0 to 4,294,967,295, got -1",
        ),
        (
            ["report", "mipr", "a", "-o", "r.html", "--queries", "0"],
            "argument --queries: expected a whole number from 1 to 1,000, got 0",
        ),
    ],
)
def test_every_number_has_a_range(capsys, argv, message):
    with pytest.raises(SystemExit):
        build_parser().parse_args(argv)
    assert message in capsys.readouterr().err


def help_of(capsys, *command) -> str:
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args([*command, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


ORDER_FLAG = re.compile(r"(?<![\w-])--order\b")  # not --trec-order


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_compare_offers_no_oracle_option(capsys, benchmark):
    help = help_of(capsys, "compare", benchmark)
    assert "--trec-order" in help and not ORDER_FLAG.search(help)
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(["compare", benchmark, str(EMBEDDING), str(EMBEDDING), "--order", "coverage"])
    assert exit.value.code == 2
    assert "unrecognized arguments: --order coverage" in capsys.readouterr().err


def test_compare_asks_for_no_oracle_reading():
    args = build_parser().parse_args(["compare", "mipr", str(EMBEDDING), str(EMBEDDING), "--no-l1", "skip"])
    request = scoring_request(args, runs=args.runs)
    assert request.oracle_options == {} and request.measure_options["no_l1"] == "skip"


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "mipr", str(EMBEDDING)],
        ["oracle", "mipr", str(EMBEDDING)],
        ["report", "mipr", str(EMBEDDING), "-o", "report.html"],
    ],
)
def test_the_commands_that_score_an_oracle_take_its_order(capsys, command):
    assert ORDER_FLAG.search(help_of(capsys, *command[:2]))
    assert scoring_request(build_parser().parse_args(command)).oracle_options == {"order": "baseline"}
    args = build_parser().parse_args([*command, "--order", "coverage"])
    assert scoring_request(args).oracle_options == {"order": "coverage"}


BENCHMARK_COMMANDS = {
    "evaluate": ["evaluate", "mipr"],
    "oracle": ["oracle", "mipr", str(EMBEDDING)],
    "compare": ["compare", "mipr", str(EMBEDDING), str(EMBEDDING)],
    "report": ["report", "mipr", str(EMBEDDING), "-o", "report.html"],
    "reproduce": ["reproduce", "mipr"],
    "retrieve": ["retrieve", "mipr"],
    "rerank": ["rerank", "mipr", "--candidates", str(EMBEDDING)],
    "baseline": ["baseline", "mipr"],
    "info": ["info", "mipr"],
    "export": ["export", "mipr", "out"],
    "mteb": ["mteb", "mipr", "--model", "mteb/baseline-random-encoder"],
    "leaderboard": ["leaderboard", "mipr", str(EMBEDDING), "-o", "board"],  # `leaderboard add` reads the board's
}


def test_every_command_but_push_and_rerun_names_a_benchmark():
    """push takes a folder, rerun a run's record: the benchmark is the folder's or the record's."""
    from mmrhub.cli import COMMANDS

    assert set(COMMANDS) - set(BENCHMARK_COMMANDS) == {"push", "rerun"}


def test_each_command_alone_builds_the_parser_it_is_named_by():
    """``mmrhub NAME ...`` imports and builds only NAME's parser (cli.commands_of): each module registers its own
    name, and --help and a misspelt name get every command."""
    import argparse

    from mmrhub.cli import COMMANDS
    from mmrhub.cli import commands_of

    def registered(parser):
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return list(action.choices)

    for name in COMMANDS:
        assert commands_of([name, "mipr"]) == (name,)
        assert registered(build_parser(commands_of([name]))) == [name]
    assert registered(build_parser()) == list(COMMANDS)
    assert commands_of(["--help"]) == commands_of(["evalute", "mipr"]) == commands_of([]) == COMMANDS


@pytest.mark.parametrize("argv", BENCHMARK_COMMANDS.values(), ids=list(BENCHMARK_COMMANDS))
def test_args_benchmark_is_the_declaration_in_every_command(argv):
    from mmrhub.benchmarks import MIPR

    assert build_parser().parse_args(argv).benchmark is MIPR


@pytest.mark.parametrize(
    "argv, choices",
    [(["retrieve", "nope"], "mipr, m2kr"), (["export", "MIPR", "out"], "mipr, m2kr"), (["reproduce", "m2kr"], "mipr")],
)
def test_an_unknown_benchmark_name_is_refused_with_the_choices(capsys, argv, choices):
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(argv)
    assert exit.value.code == 2
    assert f"invalid choice: {argv[1]!r} (choose from {choices})" in capsys.readouterr().err


def test_info_without_a_benchmark_leaves_it_none():
    assert build_parser().parse_args(["info", "--dataset-infos", "x.json"]).benchmark is None


def data_dir_helps(parser, path=()) -> dict:
    """{command path: --data-dir's help} over every subcommand of ``parser``."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(data_dir_helps(sub, (*path, name)))
        elif "--data-dir" in action.option_strings:
            found[" ".join(path)] = action.help
    return found


def test_data_dir_is_declared_once_with_one_help():
    """One declaration (``add_data_dir_argument``): the folder, a URL where the builder reads one, and the default,
    which is the bundled sample everywhere but in rerun, whose record names its folder."""
    sources = [path for path in (ROOT / "mmrhub").rglob("*.py") if '"--data-dir"' in path.read_text()]
    assert [path.relative_to(ROOT).as_posix() for path in sources] == ["mmrhub/commands/arguments.py"]
    helps = data_dir_helps(build_parser())
    folder, url = (
        f"the benchmark's data {where} (default: the bundled sample)" for where in ("folder", "folder or URL")
    )
    with_urls = {"info", "export", "retrieve", "rerank", "baseline"}
    recorded = "the benchmark's data folder (default: the folder the run's record names)"
    assert helps == {
        command: recorded if command == "rerun" else url if command in with_urls else folder for command in helps
    }
    # 5 scoring commands (leaderboard's too) x 2 benchmarks, reproduce, mteb, rerun, info, export and 3 model ones
    assert len(helps) == 18
    assert set(helps) >= {"evaluate mipr", "compare m2kr", "report mipr", "oracle m2kr", "reproduce", "mteb"}


def test_no_folder_means_the_bundled_sample_as_one_string_everywhere(tmp_path):
    """The fallback is written once (``Benchmark.data_folder``): every typed request reads the same folder, a str
    (a URL stays one)."""
    from mmrhub.benchmarks import MIPR
    from mmrhub.mteb.pipeline import MtebOptions
    from mmrhub.retrieve.options import DataOptions
    from mmrhub.scoring.request import ScoringRequest

    for data_dir, expected in [
        (None, str(MIPR.sample_dir)),
        (str(tmp_path), str(tmp_path)),
        ("https://host/mipr", "https://host/mipr"),
    ]:
        folders = [
            ScoringRequest(MIPR, data_dir).folder,
            DataOptions(MIPR, data_dir).folder,
            MtebOptions(MIPR, "m", data_dir=data_dir).folder,
            MIPR.data_folder(data_dir),
        ]
        assert folders == [expected] * 4 and {type(folder) for folder in folders} == {str}
