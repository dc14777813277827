"""The M2KR Kaggle submission CSV (``question_id,passage_id``, the ids a JSON list), and the 'A' that Kaggle's
scoring strips from numeric passage ids."""

import csv
import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as paj

from mmr_inputs import decode
from mmr_inputs import first_line
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.runs.run import zero_based_offsets


def read_kaggle(source, bom: int) -> Run:
    """M2KR Kaggle submission: ``question_id,passage_id`` (a JSON list of ids), with or without the header,
    with or without a pandas index column. pyarrow's CSV reader reads the cells and its JSON reader the lists."""
    first = first_line(source.head()[bom:]).decode("utf-8", "replace")
    cells = next(csv.reader([first]), [])
    header = int([cell.strip().lower() for cell in cells][-2:] == ["question_id", "passage_id"])
    names = [f"column{i}" for i in range(len(cells))]
    # "error": a cell holding more than a list (["a"], "x": 1) would add a field to its line's object; never ignore it
    ids = pa.schema([("ids", pa.list_(pa.string()))])
    options = paj.ParseOptions(explicit_schema=ids, unexpected_field_behavior="error")
    query_ids, rankings = [], []
    try:  # a block of rows at a time, so that only a block is held twice
        for rows in pacsv.open_csv(
            source.stream(),
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=header, use_threads=False),
            parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False
            ),
        ):
            query_ids.append(pc.utf8_trim_whitespace(rows[names[-2]]))
            # the block's lists as the JSON Lines document {"ids": [...]}, one line per row
            lines = pc.binary_join_element_wise('{"ids": ', rows[names[-1]], "}", "")
            document = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")[0]
            rankings.append(
                paj.read_json(pa.BufferReader(document.as_buffer()), parse_options=options)["ids"].combine_chunks()
            )
        qids, ids = pa.concat_arrays(query_ids), pa.concat_arrays(rankings)
        if len(ids) != len(qids) or ids.null_count or ids.values.null_count:
            raise pa.ArrowInvalid("not one list of ids per row")
    except pa.ArrowInvalid:  # numbers for ids, a blank or odd line, no row: read again below, naming the line
        return _read_kaggle_slowly(source.name, source.read(bom), bom)
    lines = np.repeat(np.arange(1 + header, len(qids) + 1 + header, dtype=np.int32), np.diff(ids.offsets.to_numpy()))
    return Run(source.name, "kaggle", qids, ids, None, pa.ListArray.from_arrays(ids.offsets, pa.array(lines)))


def _read_kaggle_slowly(path: str, data: bytes, bom: int = 0) -> Run:
    try:
        rows = list(csv.reader(decode(path, data, start=bom).splitlines()))
    except csv.Error as err:
        raise RunError(f"{path}: not a CSV file ({err})") from None
    start = 1 if [cell.strip().lower() for cell in rows[0]][-2:] == ["question_id", "passage_id"] else 0
    width = len(rows[start - 1]) if start else len(rows[0])
    query_ids, rankings, lines = [], [], []
    for number, row in enumerate(rows[start:], start + 1):
        if not row:
            continue
        if len(row) != width:
            raise RunError(f"{path}: line {number}: expected {width} columns, got {len(row)}")
        try:
            ids = json.loads(row[-1])
        except json.JSONDecodeError:
            ids = None
        if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
            raise RunError(f"{path}: line {number}: passage_id must be a JSON list of ids, got {row[-1]!r}")
        query_ids.append(row[-2].strip())
        rankings.append([str(i) for i in ids])
        lines.append([number] * len(ids))
    return Run(
        path,
        "kaggle",
        pa.array(query_ids, pa.string()),
        pa.array(rankings, pa.list_(pa.string())),
        None,
        pa.array(lines, pa.list_(pa.int64())),
    )


def restore_stripped_ids(run: Run, corpus_ids: pa.Array) -> Run:
    """Kaggle scoring stripped the 'A' of numeric passage ids (A27558 -> 27558): put it back where the corpus has it.
    Only ids the corpus lacks are looked at, and the ids are copied once, only when one is restored (a copy of every
    id with its 'A', and another for the result, took twice a top-1000 run's ids: bench/README.md)."""
    ids = run.rankings.values
    unknown = pc.and_(pc.invert(pc.is_in(ids, value_set=corpus_ids)), pc.match_substring_regex(ids, r"^[0-9]+$"))
    candidates = pc.indices_nonzero(unknown)
    prefixed = pc.binary_join_element_wise("A", ids.take(candidates), "")
    found = pc.is_in(prefixed, value_set=corpus_ids)
    if not pc.any(found).as_py():
        return run
    restore = pc.replace_with_mask(pa.array(np.zeros(len(ids), bool)), unknown, found)
    fixed = pc.replace_with_mask(ids, restore, prefixed.filter(found))
    run.rankings = pa.ListArray.from_arrays(zero_based_offsets(run.rankings), fixed)
    return run
