"""What the report asks of a benchmark's view (``mmrhub.declaration.View``, which each benchmark fills in, so the
report code never branches on a name): the rows of the queries shown and the measure to plot."""

import pyarrow as pa
import pyarrow.compute as pc

from mmrhub.declaration import View

IMAGE_COLUMN = "image"  # the decoded image column both builders add


def rows_of(table: pa.Table, id_column: str, query_ids) -> pa.Table:
    """The rows of ``table`` whose ``id_column`` is one of ``query_ids``."""
    return table.filter(pc.is_in(table[id_column], value_set=pa.array(query_ids, pa.string())))


def main_measure(view: View, per_query: dict) -> str:
    """The view's main measure, or the first one computed when the cutoffs leave it out."""
    measures = [name for name in per_query if name != "query_id"]
    return view.main_measure if view.main_measure in measures else measures[0]
