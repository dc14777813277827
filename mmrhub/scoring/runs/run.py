"""A run as read from its file: one entry per query, ids and scores as Arrow lists, and how problems are named."""

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Optional

import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.scoring.runs.source import STDIN_NAME

MAX_LISTED = 20
FORMATS = {
    "json": 'the official JSON ([{"qid": ..., "ranked": [{"did": ..., "score": ...}]}])',
    "dict": "a dict run as ranx and pytrec_eval write it ({qid: {did: score}})",
    "trec": "TREC (qid Q0 docid rank score tag)",
    "kaggle": "the M2KR Kaggle CSV (question_id,passage_id with a JSON list of passage ids)",
}


class RunError(ValueError):
    """A run file that cannot be read or does not fit the benchmark; the message names every problem found."""


@dataclass
class Run:
    """One entry per query as the file lists them: ids and scores (null where absent) as Arrow lists."""

    path: str
    format: str
    query_ids: pa.Array
    rankings: pa.ListArray
    scores: Optional[pa.ListArray]  # None: the format has no scores (the Kaggle CSV)
    lines: Optional[pa.ListArray] = None  # text formats: the line of each ranked id
    notes: list = field(default_factory=list)  # what the user should know, e.g. scores that contradict ranks
    problems: list = field(default_factory=list)  # found while reading; validation reports them with its own

    @property
    def name(self) -> str:
        """The row's name: the file's stem, or 'stdin'."""
        return "stdin" if self.path == STDIN_NAME else Path(self.path).name.split(".")[0]

    def origin(self, entry: int) -> str:
        """Where an entry is in the file: its first line, or its number."""
        if self.lines is None:
            return f"entry {entry + 1}"
        first = self.lines[entry]
        return f"line {first[0].as_py()}" if len(first) else f"entry {entry + 1}"

    def where(self, entry: int, position: Optional[int] = None) -> str:
        """'query '7' position 3 (line 12)': how a violation is named (1-based)."""
        text = f"query {self.query_ids[entry].as_py()!r}"
        if position is None:
            return f"{text} ({self.origin(entry)})"
        origin = f"line {self.lines[entry][position].as_py()}" if self.lines is not None else self.origin(entry)
        return f"{text} position {position + 1} ({origin})"


def raise_problems(
    path: str, problems: list, what: str = "does not fit the benchmark", total: int = 0, hint: str = ""
) -> None:
    """Raise one RunError listing the first MAX_LISTED problems and how many more there are, then ``hint``."""
    if problems:
        total = max(total, len(problems))
        listed = "\n  ".join(problems[:MAX_LISTED])
        more = f"\n  ... and {total - min(len(problems), MAX_LISTED)} more" if total > MAX_LISTED else ""
        raise RunError(f"{path} {what}: {total} problem(s):\n  {listed}{more}" + (f"\n{hint}" if hint else ""))


def zero_based_offsets(lists: pa.ListArray) -> pa.Array:
    """Offsets that start at 0 (a sliced list array's do not)."""
    offsets = lists.offsets
    return pc.subtract(offsets, offsets[0])
