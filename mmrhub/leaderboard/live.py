"""The board a running Space holds: its settings, its judgments (read and checked once, as ``mmrhub evaluate`` reads
them), its entries and their standings; and an uploaded run, scored against the same judgments with the same
options and compared with every entry (only the new pairs are tested: the entries' own pairs are kept)."""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from mmrhub.declaration import Benchmark
from mmrhub.leaderboard import judgments
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.records import sha256_of
from mmrhub.leaderboard.results import Entry
from mmrhub.leaderboard.results import check_name
from mmrhub.leaderboard.results import entry_of
from mmrhub.leaderboard.results import read_entries
from mmrhub.leaderboard.results import score_files
from mmrhub.leaderboard.results import template
from mmrhub.leaderboard.standings import Standings
from mmrhub.leaderboard.standings import ranked
from mmrhub.leaderboard.standings import standings_of
from mmrhub.leaderboard.upload import plain_name
from mmrhub.leaderboard.upload import prepare
from mmrhub.leaderboard.upload import prepare_record
from mmrhub.scoring.score import load_truth


class UploadError(ValueError):
    """An upload the board cannot score: the message names the file as uploaded, a line per problem."""


@dataclass(frozen=True)
class Uploaded:
    """An uploaded run scored: its result file's content, its row, and the board's standings with it, last."""

    data: dict
    entry: Entry
    standings: Standings


class LiveBoard:
    """A board folder, read once: ``standings`` of its entries, ``problems`` (result files left out, one line each)."""

    def __init__(self, benchmark: Benchmark, folder):
        self.folder = Path(folder)
        self.benchmark = benchmark
        self.board = read_board(folder)
        if self.board.benchmark_name != benchmark.name:
            raise ValueError(f"{self.folder} is a board of {self.board.benchmark_name}, not of {benchmark.name}.")
        judgments.fetch(folder, self.board)
        self.request = self.board.request(benchmark, folder)
        self.truth = load_truth(self.request)
        self.expected = template(benchmark, self.truth, self.request.measure_options)
        entries, self.problems = read_entries(folder, self.board, benchmark, self.expected)
        self.standings = standings_of(ranked(entries, benchmark), self.board)

    @property
    def names(self) -> set:
        """The entries' names."""
        return {entry.name for entry in self.standings.entries}

    def score(self, path, shown: str = "", name: str = "", record: Optional[str] = None) -> Uploaded:
        """Score the uploaded run at ``path`` (uploaded as ``shown``; with the record at ``record``, if any) as the
        entry ``name`` (default: the file's stem) and compare it with every entry."""
        shown = shown or Path(path).name
        try:
            name = check_name(name or plain_name(shown).split(".")[0] or "upload")
        except ValueError as err:
            raise UploadError(str(err)) from None
        if name in self.names:
            raise UploadError(f"an entry named {name!r} is on the board already: give the run another name.")
        with tempfile.TemporaryDirectory(prefix="mmrhub-upload-") as work:
            prefix = os.path.join(work, "")
            try:
                run = prepare(path, Path(work), self.board, shown)
                if record:
                    prepare_record(record, run, Path(record).name)
                request = self.board.request(self.benchmark, self.folder, runs=(run,), names=(name,))
                [data] = score_files(request, self.truth, self.board, shown_as={str(run): shown})
            except (ValueError, OSError) as err:  # the reader's, validation's and the caps' one-line errors
                raise UploadError(str(err).replace(prefix, "")) from None
        data["notes"] = [note.replace(prefix, "") for note in data["notes"]]
        data["run"]["sha256"] = sha256_of(path)  # of the file as uploaded, compressed or not
        entry = entry_of(data, self.benchmark, shown)
        entries = [*self.standings.entries, entry]
        return Uploaded(data, entry, standings_of(entries, self.board, earlier=self.standings.comparison))
