"""``mmrhub push DIR org/name`` publishes a board as it publishes a metric Space: a Space repo, every file of the
folder in one commit with the manifest recording each file's blob id, and nothing of anyone else's deleted: an entry
merged from a pull request on the Hub stays through the owner's next push (against the loopback Hub of commits,
``_hub_server``, through huggingface_hub's own client)."""

import json

from _cli import run_cli
from _leaderboard_helpers import build_board
from _leaderboard_helpers import swapped_run
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED

import mmrhub.export.push as push_module
from mmrhub.leaderboard.results import file_name


def space(hub):
    return hub.repo("org/mipr-board", "space")


def manifest(hub) -> dict:
    return json.loads(space(hub).files()[push_module.MANIFEST])


def test_a_board_is_pushed_as_a_space_and_a_merged_entry_stays(capsys, tmp_path, writable_hub):
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING])
    code, out, err = run_cli(capsys, "push", board, "org/mipr-board")
    assert code == 0, err
    assert out.splitlines()[0].startswith("space org/mipr-board: ")
    local = sorted(p.relative_to(board).as_posix() for p in board.rglob("*") if p.is_file())
    assert sorted(space(writable_hub).files()) == sorted([*local, ".gitattributes", push_module.MANIFEST])
    assert {"app.py", "board.json", "judgments/mipr_annotation.jsonl", "mmrhub/scoring/score.py"} <= set(local)
    assert sorted(manifest(writable_hub)["files"]) == local  # a board is mmrhub's: its files are recorded as ours
    # a pull request merged on the Hub adds an entry this folder does not hold
    merged = f"results/{file_name('from-a-pull-request')}"
    entry = (board / "results" / file_name("simulated_embedding_top50")).read_bytes()
    space(writable_hub).commit_as_user({merged: entry}, "Merge pull request #1")
    code, _, err = run_cli(capsys, "leaderboard", "add", board, MIPR_RERANKED)
    assert code == 0, err
    code, out, err = run_cli(capsys, "push", board, "org/mipr-board")
    assert code == 0, err
    assert f"keep    {merged}" in out and "0 file(s) deleted" in out
    files = space(writable_hub).files()
    assert files[merged] == entry and f"results/{file_name('simulated_reranker_top50')}" in files
    assert not [path for kind, path in space(writable_hub).commits[-1].operations if kind == "delete"]


def test_an_entry_removed_from_the_folder_is_removed_from_the_space(capsys, tmp_path, writable_hub):
    third = swapped_run(MIPR_EMBEDDING, tmp_path / "third.json")
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING, third])
    assert run_cli(capsys, "push", board, "org/mipr-board")[0] == 0
    (board / "results" / file_name("third")).unlink()  # the owner takes the entry off the board
    code, out, _ = run_cli(capsys, "push", board, "org/mipr-board")
    assert code == 0 and f"delete  results/{file_name('third')}" in out
    assert f"results/{file_name('third')}" not in space(writable_hub).files()
    assert f"results/{file_name('simulated_embedding_top50')}" in manifest(writable_hub)["files"]
