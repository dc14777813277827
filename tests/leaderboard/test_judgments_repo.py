"""A board whose judgments live in a Hub dataset repo (``--judgments-repo org/name@COMMIT``): the board folder holds
no copy; the Space fetches exactly the tables scoring reads, at that commit, once, and checks each one's sha256
against the one its entries were scored with. Against a loopback Hub (``hub_server``) serving the M2KR sample as
the repo, its image archives included (never read)."""

import shutil

import pytest
from _cli import run_cli
from _leaderboard_helpers import build_board
from _paths import M2KR_RUN
from _paths import M2KR_SAMPLE

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.live import LiveBoard

M2KR = BENCHMARKS["m2kr"]
TABLES = sorted(path.relative_to(M2KR_SAMPLE).as_posix() for path in M2KR.judgment_files(M2KR_SAMPLE))


@pytest.fixture
def repo_board(capsys, tmp_path, hub_server):
    repo = shutil.copytree(M2KR_SAMPLE, tmp_path / "repo")
    commit = hub_server.add_repo("org/m2kr-tables", repo)
    board = build_board(
        capsys,
        tmp_path / "board",
        "m2kr",
        [M2KR_RUN],
        "--data-dir",
        repo,
        "--judgments-repo",
        f"org/m2kr-tables@{commit}",
    )
    return board, repo, commit


def test_the_space_fetches_the_tables_once_at_the_commit(repo_board, hub_server):
    board, _, commit = repo_board
    assert not (board / "judgments").exists()
    judgments = read_board(board).judgments
    assert (judgments["repo"], judgments["revision"]) == ("org/m2kr-tables", commit)
    assert judgments["source"] == f"the dataset repo org/m2kr-tables at commit {commit}"
    assert "dataset repo org/m2kr-tables at commit" in (board / "README.md").read_text()
    hub_server.reset()
    live = LiveBoard(M2KR, board)
    fetched = sorted(
        request.path.split(f"/resolve/{commit}/")[1] for request in hub_server.requests if "/resolve/" in request.path
    )
    assert fetched == TABLES  # the tables, once each; no image archive
    assert [entry.name for entry in live.standings.entries] == ["simulated_top5"]
    hub_server.reset()
    LiveBoard(M2KR, board)
    assert hub_server.requests == []  # fetched once: the folder holds them now


def test_a_table_that_is_not_the_recorded_one_is_refused(repo_board):
    board, repo, _ = repo_board
    answers = repo / TABLES[0]
    answers.write_bytes(answers.read_bytes() + b"\0")  # the repo changed under the recorded sha256
    with pytest.raises(ValueError, match=f"{TABLES[0]} is not the table the board's entries were scored against"):
        LiveBoard(M2KR, board)


def test_a_hub_that_cannot_be_reached_is_one_line(repo_board, monkeypatch):
    from huggingface_hub import constants

    board, _, commit = repo_board
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ConnectionError) as raised:
        LiveBoard(M2KR, board)
    message = str(raised.value)
    first = next(iter(read_board(board).judgments["files"]))
    assert message.startswith(f"cannot read {first} from the dataset repo org/m2kr-tables at commit {commit} (")
    assert message.endswith("offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment "
                            "variable.); the board scores against it.")  # fmt: skip
    assert "\n" not in message


def test_a_repo_without_a_commit_is_refused(capsys, tmp_path):
    code, _, err = run_cli(
        capsys, "leaderboard", "m2kr", M2KR_RUN, "-o", tmp_path / "b", "--judgments-repo", "org/x@main"
    )
    assert code == 1 and "expected a dataset repo and the commit its tables are read at" in err
    assert not (tmp_path / "b").exists()
