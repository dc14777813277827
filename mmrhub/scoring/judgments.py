"""What scoring needs of a benchmark's judgments, read from its tables alone: no images, no archives, no ``datasets``.

Each benchmark (``mmrhub.benchmarks``) says which tables and columns it reads; this module holds what they share:
the ``Truth`` they produce, the vectorised checks, and the cache between processes. The checks only decide
*whether* the tables are valid. When one fails, the benchmark's builder validates the same files (importing
``datasets``, seconds, on this error path only), so a user sees exactly the builder's error naming the file, the
line or id, and what was expected.
"""

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj

from mmrhub.scoring import judgment_cache
from mmrhub.scoring import pandas_free


class TruthError(ValueError):
    """The tables are invalid, but the builder found nothing wrong: a check here disagrees with the builder's."""


@dataclass
class Truth:
    """The judged queries (rows of ``judgments``, in order), the corpus ids, and what the user should know."""

    query_ids: pa.Array
    corpus_ids: pa.Array
    judgments: object  # mipr_measures.Qrels or m2kr_measures.Positives
    groups: Callable[[], list]  # each judged query's group for the per-group means (computed when asked)
    unjudged_query_ids: pa.Array  # queries of the benchmark without judgments: a run may list them, unscored
    notes: list = field(default_factory=list)


def all_valid(*arrays) -> bool:
    """No nulls, and valid UTF-8 (the JSON reader passes invalid bytes through)."""
    try:
        for array in arrays:
            array.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return not any(array.null_count for array in arrays)


def unique(array) -> bool:
    return pc.count_distinct(array).as_py() == len(array)


def contiguous_columns(table: pa.Table) -> dict:
    """Column name -> one contiguous pa.Array (a ChunkedArray's to_numpy would import pandas, half a second)."""
    return {name: table[name].combine_chunks() for name in table.column_names}


def existing_folder(data_dir) -> Path:
    folder = Path(data_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"data folder {folder} does not exist or is not a folder: check --data-dir.")
    return folder


def read_jsonl(path: Path, schema: pa.Schema):
    """The columns, or None when pyarrow cannot read them with this schema (the builder then names the problem)."""
    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        return contiguous_columns(paj.read_json(path, read_options=paj.ReadOptions(block_size=1 << 24), parse_options=options))
    except pa.ArrowInvalid:
        return None


def builder_error(build, where: str):
    """Run the builder on the same files; it raises its own named error. If it does not, say what we found."""
    pandas_free.unblock()  # the builders import datasets, which needs pandas
    import datasets

    # the configs that pass would print progress bars before the error, which must stay one line
    were_disabled = datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        build()
    finally:
        if not were_disabled:
            datasets.enable_progress_bars()
    raise TruthError(
        f"{where}: the scoring tables failed a check that the builder passed; please report this with the files."
    )


def validated(folder: Path, kind: str, sources, read, valid, build, derive=lambda tables: tables) -> dict:
    """The tables ``read()`` gives once ``valid`` passes them (else the builder's error), with what ``derive``
    adds to them, kept between processes."""
    key = judgment_cache.source_key(kind, sources)
    tables = judgment_cache.load(key)
    if tables is None:
        tables = read()
        if not valid(tables):
            builder_error(build, str(folder))
        tables = derive(tables)
        judgment_cache.save(key, tables)
    return tables




def coverage_notes(queries_source, num_unjudged: int, list_lengths, query_ids) -> list:
    """Judgments that change what the means are over, said with counts rather than silently."""
    notes = []
    if num_unjudged:
        notes.append(
            f"{num_unjudged} queries of {queries_source} have no judgment row: they are left out of every mean."
        )
    empty = int((list_lengths.to_numpy() == 0).sum())
    if empty:
        notes.append(f"{empty} judged queries have an empty judgment list: they score 0 and stay in the means.")
    return notes
