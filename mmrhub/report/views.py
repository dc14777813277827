"""How each benchmark is shown in a report: its cutoff, main measure, grades and where the grades are read.

Each benchmark's module (``mmrhub.benchmarks``) holds its view, so the report code never branches on a name.
"""

from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

IMAGE_COLUMN = "image"  # the decoded image column both builders add


@dataclass(frozen=True)
class Grade:
    """A grade as the gallery shows it."""

    label: str
    colour: str  # CSS colour of the thumbnail's frame


@dataclass(frozen=True)
class View:
    """How a report shows a benchmark."""

    top_k: int  # thumbnails per run
    main_measure: str  # plotted and used to pick queries; the first measure when a --k leaves it out
    grades: tuple  # Grade, best first; the last is what an item without a judgment shows
    relevant: str  # the grade whose missed items the gallery shows
    judgments_config: str  # the builder config holding the grades
    read_grades: Callable  # (judgments table, query ids) -> {query id: {item id: grade label}}
    judgment_word: str = "grade"  # what the gallery calls an item's label: MIPR's grade, M2KR's positive or not

    @property
    def unjudged(self) -> str:
        """What an item without a judgment shows."""
        return self.grades[-1].label


def rows_of(table: pa.Table, id_column: str, query_ids) -> pa.Table:
    """The rows of ``table`` whose ``id_column`` is one of ``query_ids``."""
    return table.filter(pc.is_in(table[id_column], value_set=pa.array(query_ids, pa.string())))


def main_measure(view: View, per_query: dict) -> str:
    """The view's main measure, or the first one computed when the cutoffs leave it out."""
    measures = [name for name in per_query if name != "query_id"]
    return view.main_measure if view.main_measure in measures else measures[0]
