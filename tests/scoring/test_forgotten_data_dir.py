"""A run of the real data scored against the bundled sample because --data-dir was forgotten: every command that
scores runs says so in one line, naming the sample and --data-dir, whatever the run shares with the sample (until
now: a count of problems, 20 lines of them and the hint last, or "is it a run of another benchmark?"). The commands
that score the runs they made (retrieve, baseline, mteb) go through the same rule: their tests watch it."""

import json
import random

import pytest
from _cli import run_cli
from _paths import M2KR_RUN
from _paths import MIPR_EMBEDDING
from _paths import MIPR_SAMPLE

from mmrhub.declaration import Benchmark

FULL_QUERIES = 3_522  # MIPR's, idx "1".."3522" as bench/make_mipr_synthetic.py numbers them; the sample's are 1..27
SAMPLE_QUERIES = 27


def refusal(command: str, run, found: str, title: str = "MIPR", queries: int = SAMPLE_QUERIES) -> str:
    return (
        f"mmrhub {command}: error: {run}: {found} are not in the bundled {title} sample ({queries} queries), which "
        f"was scored as no --data-dir was given: pass --data-dir DIR to score the run against {title}'s data.\n"
    )


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """A run of full-scale MIPR's shape: every query, its top 100 of 30,731 products."""
    rng = random.Random(0)
    products = [f"{rng.getrandbits(64):016x}" for _ in range(30_731)]
    entries = [
        {"qid": str(q), "ranked": [{"did": d, "score": 100 - i} for i, d in enumerate(rng.sample(products, 100))]}
        for q in range(1, FULL_QUERIES + 1)
    ]
    path = tmp_path_factory.mktemp("full") / "full.json"
    path.write_text(json.dumps(entries))
    return path


@pytest.mark.parametrize(
    "command, extra",
    [
        ("evaluate", []),
        ("evaluate", ["--oracle", MIPR_EMBEDDING]),
        ("oracle", []),
        ("compare", [MIPR_EMBEDDING, "--permutations", "10"]),
        ("report", ["-o", "report.html"]),
    ],
)
def test_every_scoring_command_says_it_in_one_line(capsys, tmp_path, monkeypatch, full_run, command, extra):
    if command == "report":
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, command, "mipr", full_run, *extra)
    assert (code, out) == (1, "")
    progress = "mmrhub report: scoring 1 run(s)\n" if command == "report" else ""  # the report's steps
    assert err == progress + refusal(command, full_run, f"3,495 of its {FULL_QUERIES:,} queries")
    assert not (tmp_path / "report.html").exists()


def test_reproduce_says_it_of_a_shipped_run(capsys, monkeypatch, full_run):
    monkeypatch.setattr(Benchmark, "runs_shipped_with", lambda self, data_dir=None: [("full", full_run)])
    code, out, err = run_cli(capsys, "reproduce", "mipr")
    assert (code, out) == (1, "") and err == refusal("reproduce", full_run, f"3,495 of its {FULL_QUERIES:,} queries")


def test_none_in_common_is_the_same_line(capsys):
    """A run sharing no query with the sample (here M2KR's): the line names the sample, not another benchmark."""
    code, _, err = run_cli(capsys, "evaluate", "mipr", M2KR_RUN)
    assert code == 1 and err == refusal("evaluate", M2KR_RUN, "30 of its 30 queries")
    code, _, err = run_cli(capsys, "evaluate", "mipr", M2KR_RUN, "--data-dir", MIPR_SAMPLE)
    assert code == 1 and "is it a run of another benchmark?" in err  # a folder was named: the sample is not the cause


def test_set_aside_queries_leave_ids_of_other_data(capsys, full_run):
    """--ignore-unknown-queries sets the other queries aside, but the sample's own rank other data's ids."""
    code, _, err = run_cli(capsys, "evaluate", "mipr", full_run, "--ignore-unknown-queries")
    found = f"3,495 of its {FULL_QUERIES:,} queries (set aside: --ignore-unknown-queries) and 2,700 ids the others rank"
    assert code == 1 and err == refusal("evaluate", full_run, found)


def test_m2kr_says_it_too(capsys, tmp_path):
    entries = json.loads(M2KR_RUN.read_text())
    extra = [{"qid": f"9{number:04d}", "ranked": entries[0]["ranked"]} for number in range(5)]
    run = tmp_path / "run.json"
    run.write_text(json.dumps(entries + extra))
    code, _, err = run_cli(capsys, "evaluate", "m2kr", run)
    assert code == 1 and err == refusal("evaluate", run, "5 of its 35 queries", "M2KR", 30)
