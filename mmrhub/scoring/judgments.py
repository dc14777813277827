"""What scoring needs of a benchmark's judgments, read from its tables alone: no images, no archives, no ``datasets``.

Each benchmark (``mmrhub.benchmarks``) reads its tables with its format's rules, the module its builder validates
with (``mipr_format``, ``m2kr_format``), so scoring accepts and refuses what the builder does, with the builder's
error naming the file and the line or row. This module holds what the benchmarks share: the ``Truth`` they
produce and the cache of validated tables between processes.
"""

from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa

from mmrhub.declaration import Judgments
from mmrhub.scoring import judgment_cache


@dataclass
class Truth:
    """The judged queries (rows of ``judgments``, in order), the corpus ids, and what the user should know."""

    query_ids: pa.Array
    corpus_ids: pa.Array
    judgments: Judgments  # mipr_measures.Qrels or m2kr_measures.Positives
    groups: Callable[[], list]  # each judged query's group for the per-group means (computed when asked)
    unjudged_query_ids: pa.Array  # queries of the benchmark without judgments: a run may list them, unscored
    notes: list = field(default_factory=list)
    kaggle_csv: bool = False  # whether the Kaggle submission CSV is the benchmark's own run format (M2KR's)


def contiguous_columns(table: pa.Table) -> dict:
    """Column name -> one contiguous pa.Array (a ChunkedArray's to_numpy would import pandas)."""
    return {name: table[name].combine_chunks() for name in table.column_names}


def numpy_array(values, type: pa.DataType) -> pa.Array:
    """A 1-D numpy array of ``type``'s width as an Arrow array, sharing its memory: ``pa.array`` would check it
    against ``numpy.ma.MaskedArray``, importing numpy.ma on a first call (bench/README.md, issue 39's note)."""
    values = np.ascontiguousarray(values)
    if values.ndim != 1 or values.itemsize * 8 != type.bit_width:
        raise TypeError(
            f"numpy_array takes a 1-D array of {type.bit_width}-bit values, got {values.dtype} {values.shape}"
        )
    return pa.Array.from_buffers(type, len(values), [None, pa.py_buffer(values)])


def existing_folder(data_dir) -> Path:
    """``data_dir`` as a folder that exists, else an error naming it."""
    folder = Path(data_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"data folder {folder} does not exist or is not a folder: check --data-dir.")
    return folder


def validated(kind: str, sources, read) -> dict:
    """The tables ``read()`` gives ({table: {column: pa.Array}}; it raises the format's error on invalid files),
    kept between processes while the ``sources`` files stay the same."""
    key = judgment_cache.source_key(kind, sources)
    tables = judgment_cache.load(key)
    if tables is None:
        tables = read()
        judgment_cache.save(key, tables)
    return tables


def coverage_notes(queries_source, num_unjudged: int, list_lengths) -> list:
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
