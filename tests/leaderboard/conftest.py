"""The leaderboard tests' shared fixtures: runs derived from the MIPR sample's own, and a board of three of them."""

import pytest
from _leaderboard_helpers import mipr_runs

from mmrhub.cli import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return mipr_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def board(tmp_path_factory, runs):
    """``mmrhub leaderboard mipr`` over the first three runs: the board folder, one per test module (a module's
    uploads change it)."""
    folder = tmp_path_factory.mktemp("board") / "board"
    assert main(["leaderboard", "mipr", *map(str, runs[:3]), "-o", str(folder)]) == 0
    return folder
