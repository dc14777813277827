"""How each benchmark is shown in a report: its cutoff, main measure, grades and where the grades are read.

Each benchmark's declaration (``mmrhub.benchmarks``) holds its view, so the report code never branches on a name.
"""

from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

IMAGE_COLUMN = "image"  # the decoded image column both builders add


@dataclass(frozen=True)
class Grade:
    label: str
    colour: str  # CSS colour of the thumbnail's frame


@dataclass(frozen=True)
class View:
    top_k: int  # thumbnails per run
    main_measure: str  # plotted and used to pick queries; the first measure when a --k leaves it out
    grades: tuple  # Grade, best first; the last is what an item without a judgment shows
    relevant: str  # the grade whose missed items the gallery shows
    judgments_config: str  # the builder config holding the grades
    read_grades: Callable  # (judgments table, query ids) -> {query id: {item id: grade label}}

    @property
    def unjudged(self) -> str:
        return self.grades[-1].label


def _rows_of(table: pa.Table, id_column: str, query_ids) -> pa.Table:
    return table.filter(pc.is_in(table[id_column], value_set=pa.array(query_ids, pa.string())))


def _mipr_grades(table: pa.Table, query_ids) -> dict:
    rows = _rows_of(table, "idx", query_ids)
    return {
        idx: {item["item_id"]: item["final_grade"] for item in items}
        for idx, items in zip(rows["idx"].to_pylist(), rows["items"].to_pylist())
    }


def _m2kr_grades(table: pa.Table, query_ids) -> dict:
    rows = _rows_of(table, "question_id", query_ids)
    return {qid: dict.fromkeys(ids, "positive") for qid, ids in zip(rows["question_id"].to_pylist(), rows["pos_item_ids"].to_pylist())}


MIPR_VIEW = View(
    top_k=10,
    main_measure="nDCG@10",
    grades=(Grade("L1", "#1a9850"), Grade("L2", "#91cf60"), Grade("N1", "#fc8d59"), Grade("N2", "#fdae61"),
            Grade("N3", "#d73027"), Grade("unjudged", "#bdbdbd")),
    relevant="L1",
    judgments_config="qrels",
    read_grades=_mipr_grades,
)
M2KR_VIEW = View(
    top_k=5,
    main_measure="Recall@5",
    grades=(Grade("positive", "#1a9850"), Grade("not positive", "#bdbdbd")),
    relevant="positive",
    judgments_config="challenge_answers",
    read_grades=_m2kr_grades,
)


def main_measure(view: View, per_query: dict) -> str:
    measures = [name for name in per_query if name != "query_id"]
    return view.main_measure if view.main_measure in measures else measures[0]
