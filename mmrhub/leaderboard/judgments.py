"""The judgment tables a board scores against, in its folder (``judgments/``, the benchmark's official layout): copied
in when the board is built from a data folder, or fetched from a Hub dataset repo pinned to a commit when the Space
starts (a board built with ``--judgments-repo``); either way checked against the sha256 each table had when the
entries were scored, so an upload is scored against the very tables the entries were."""

import re
from pathlib import Path

from mmrhub.declaration import Benchmark
from mmrhub.leaderboard.board import JUDGMENTS
from mmrhub.leaderboard.board import Board
from mmrhub.leaderboard.records import sha256_of
from mmrhub.writing import write_bytes

REPO_AT_COMMIT = re.compile(r"([\w.-]+/[\w.-]+)@([0-9a-f]{40})")


def tables(benchmark: Benchmark, folder) -> dict:
    """{path under the data folder: the file} of the tables scoring reads."""
    folder = Path(folder)
    return {Path(path).relative_to(folder).as_posix(): Path(path) for path in benchmark.judgment_files(folder)}


def parse_repo(text: str) -> tuple:
    """``org/name@COMMIT`` as (repo id, commit); an error saying what is expected otherwise."""
    match = REPO_AT_COMMIT.fullmatch(text)
    if not match:
        raise ValueError(
            f"--judgments-repo {text!r}: expected a dataset repo and the commit its tables are read at, "
            "org/name@<40 hex digits> (a branch moves; a commit does not)."
        )
    return match[1], match[2]


def fetch(folder, board: Board) -> None:
    """Download the tables a board reads from its dataset repo (if it names one) that its folder lacks, at the
    recorded commit, then check every table's sha256."""
    repo, revision = board.judgments.get("repo"), board.judgments.get("revision")
    missing = [name for name in board.judgments["files"] if not (Path(folder) / JUDGMENTS / name).is_file()]
    if repo and missing:
        from huggingface_hub import HfFileSystem  # only a board whose tables live on the Hub

        from mmrhub.export.push import connection_errors

        files = HfFileSystem()
        for name in missing:
            where = f"datasets/{repo}@{revision}/{name}"
            try:
                data = files.cat_file(where)
            except (OSError, *connection_errors()) as err:
                raise ConnectionError(
                    f"cannot read {name} from the dataset repo {repo} at commit {revision} ({err}); the board "
                    "scores against it."
                ) from None
            target = Path(folder) / JUDGMENTS / name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(target, data)
    check(folder, board)


def check(folder, board: Board) -> None:
    """The judgment tables in the board folder are the ones the entries were scored against (their sha256)."""
    for name, digest in board.judgments["files"].items():
        path = Path(folder) / JUDGMENTS / name
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing: the board's judgments are {', '.join(board.judgments['files'])}."
            )
        if sha256_of(path) != digest:
            where = board.judgments.get("repo")
            raise ValueError(
                f"{path} is not the table the board's entries were scored against (its sha256 differs"
                + (f" from the one recorded for {where} at commit {board.judgments.get('revision')}" if where else "")
                + "): restore it, or build the board again."
            )
