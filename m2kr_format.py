"""M2KR's format rules, stated once: the source schemas, the tasks and the checks of the three Parquet tables.

The builder (``m2kr.py``) and scoring (``mmrhub.benchmarks.m2kr``) both validate with these functions, so they accept
the same tables (casting large, dictionary, view and integer columns to the canonical types) and refuse the same
ones with the same :class:`M2krDataError` naming the file and row (counted from 1, as lines are: every message names
a row through ``mmr_inputs.row_name``). Only pyarrow is imported (scoring never imports ``datasets``); local files
are opened by ``mmr_inputs`` (regular files only), URLs with the caller's ``opener`` (the builder's).
"""

import json
import logging

import pyarrow as pa
import pyarrow.compute as pc

# The one way in for files, beside this file (m2kr.py explains the backslash).
# fmt: off
if __package__: \
from .mmr_inputs import InputError, open_input, row_name
else:
    from mmr_inputs import InputError, open_input, row_name
# fmt: on

# The builder's logger: these are its warnings, whoever reads the files.
logger = logging.getLogger("m2kr")

CONFIG_NAMES = ("challenge_data", "challenge_passage", "challenge_answers")
SPLIT = "train"
ID_FIELDS = {"challenge_data": "question_id", "challenge_passage": "passage_id", "challenge_answers": "question_id"}
TASKS = ("image-to-document", "image+text-to-document")
_STRINGS = pa.list_(pa.string())
SOURCE_SCHEMAS = {
    "challenge_data": pa.schema(
        [
            ("img_path", pa.string()),
            ("instruction", pa.string()),
            ("question", pa.string()),
            ("question_id", pa.string()),
            ("pos_item_ids", _STRINGS),
            ("pos_item_contents", _STRINGS),
        ]
    ),
    "challenge_passage": pa.schema(
        [("passage_id", pa.string()), ("passage_content", pa.string()), ("page_screenshot", pa.string())]
    ),
    "challenge_answers": pa.schema([("question_id", pa.string()), ("pos_item_ids", _STRINGS)]),
}
# Columns that may be null in the source: a missing question means "no question", blank ground-truth fields.
NULLABLE = {"challenge_data": {"question", "pos_item_ids", "pos_item_contents"}}


class M2krDataError(ValueError):
    """An M2KR source table or image archive does not follow the expected format."""


def read_config(name: str, files: dict, opener=None) -> pa.Table:
    """Config ``name``'s table, checked as the builder checks it (the archives aside); ``challenge_answers`` also
    against the ids of the other two. ``files``: {config: (paths to read, names for messages)}."""
    if name != "challenge_answers":
        return read_table(*files[name], name, opener)
    # Answers are joined to the other tables by id alone: their text and image columns are not read.
    tables = {
        config: read_table(*files[config], config, opener, None if config == name else [ID_FIELDS[config]])
        for config in CONFIG_NAMES
    }
    check_answers(tables[name], tables["challenge_data"], tables["challenge_passage"])
    return tables[name]


def read_table(paths, urls, config: str, opener=None, columns=None) -> pa.Table:
    """Read and validate the Parquet files of one config; ``urls`` name the files in messages.

    ``columns`` reads only those columns, e.g. the ids of a table that answers are joined to; every column of
    the format must still be present (a check of the file's metadata, which reads no data).
    """
    schema = full = SOURCE_SCHEMAS[config]
    if columns:
        schema = pa.schema([full.field(column) for column in columns])
    pieces, displays = [], [table_display(config, url) for url in urls]
    for path, display in zip(paths, displays):
        try:
            handle = open_input(path, opener)
        except InputError as err:
            raise M2krDataError(str(err)) from None
        with handle as f:
            pieces.append(_read_parquet(f, display, schema, full))
        for field in schema:
            pieces[-1] = _cast_column(pieces[-1], field, display)
            if field.name not in NULLABLE.get(config, ()) and pieces[-1][field.name].null_count:
                row = pc.index(pc.is_null(pieces[-1][field.name]), True).as_py()
                raise M2krDataError(f"{display} {row_name(row)}: {field.name} is null.")
    table = pa.concat_tables(pieces)
    if not table.num_rows:  # the builder and scoring refuse alike (datasets would only say "corresponds to no data")
        raise M2krDataError(
            f"{', '.join(urls)}: no rows. An M2KR {config} table has at least one; the file was written empty or cut "
            "short."
        )
    if ID_FIELDS[config] in schema.names:
        _check_unique(table[ID_FIELDS[config]], displays, [len(piece) for piece in pieces])
    if "question" in schema.names:
        question = pc.fill_null(table["question"], "")
        table = table.set_column(table.schema.get_field_index("question"), "question", question)
        task = pc.if_else(pc.equal(question, ""), TASKS[0], TASKS[1])
        table = table.append_column("task", task)
    return table.replace_schema_metadata({_FILES_KEY: json.dumps([[d, len(p)] for d, p in zip(displays, pieces)])})


# Which file each row came from, kept in the table's metadata for messages about joins.
_FILES_KEY = b"m2kr_source_files"


def table_display(config: str, url: str) -> str:
    """How messages name a table file: ``<config>/<file name>``."""
    return f"{config}/{url.rsplit('/', 1)[-1]}"


def _read_parquet(f, display: str, schema: pa.Schema, full: pa.Schema) -> pa.Table:
    import pyarrow.parquet as pq  # here: importing this module (every mmrhub command does) need not load Parquet

    try:
        parquet = pq.ParquetFile(f)
    except (pa.ArrowInvalid, OSError) as err:
        raise M2krDataError(f"{display}: not a readable Parquet file ({err}).") from None
    present = parquet.schema_arrow.names
    missing = [field for field in full.names if field not in present]
    if missing:
        raise M2krDataError(
            f"{display}: missing column(s) {', '.join(missing)}; expected columns {', '.join(full.names)}."
        )
    extra = [field for field in present if field not in full.names]
    if extra:
        logger.warning("%s: columns not in the M2KR format are left out: %s", display, ", ".join(extra))
    try:
        return parquet.read(columns=schema.names)
    except (pa.ArrowInvalid, OSError) as err:  # a damaged page or footer shows only when the data is read
        raise M2krDataError(f"{display}: not a readable Parquet file ({err}).") from None


def _cast_column(table: pa.Table, field: pa.Field, display: str) -> pa.Table:
    if table.schema.field(field.name).type.equals(field.type):
        return table
    try:
        cast = table[field.name].cast(field.type)
        return table.set_column(table.schema.get_field_index(field.name), field.name, cast)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        found = table.schema.field(field.name).type
        raise M2krDataError(f"{display}: column {field.name} is {found}, expected {field.type}.") from None


def _locate(displays, lengths, row: int):
    """(file, row within the file) of a row of the concatenated table, both 0-based (``row_name`` shows them)."""
    for display, length in zip(displays, lengths):
        if row < length:
            return display, row
        row -= length
    raise IndexError(row)


def _check_unique(column: pa.ChunkedArray, displays, lengths):
    if pc.count_distinct(column).as_py() == len(column):
        return
    first_seen = {}
    for row, value in enumerate(column.to_pylist()):
        if value in first_seen:
            here, first = _locate(displays, lengths, row), _locate(displays, lengths, first_seen[value])
            where = row_name(first[1]) if first[0] == here[0] else f"{first[0]} {row_name(first[1])}"
            raise M2krDataError(f'{here[0]} {row_name(here[1])}: duplicate id "{value}" (first at {where}).')
        first_seen[value] = row


def _files_of(table: pa.Table, mask) -> str:
    """The files (of a table read by read_table) holding the rows where ``mask`` is true."""
    files = json.loads(table.schema.metadata[_FILES_KEY])
    displays, lengths = [display for display, _ in files], [length for _, length in files]
    rows = pc.indices_nonzero(mask).to_pylist() if len(mask) else []
    return ", ".join(dict.fromkeys(_locate(displays, lengths, row)[0] for row in rows))


def _all_files(table: pa.Table) -> str:
    return ", ".join(display for display, _ in json.loads(table.schema.metadata[_FILES_KEY]))


def check_answers(answers: pa.Table, queries: pa.Table, passages: pa.Table):
    """Every answered query must be in challenge_data and every positive in challenge_passage."""
    unknown_mask = pc.invert(pc.is_in(answers["question_id"], queries["question_id"].combine_chunks()))
    unknown = pc.filter(answers["question_id"], unknown_mask)
    if len(unknown):
        raise M2krDataError(
            f"{_files_of(answers, unknown_mask)}: {len(unknown)} question_id(s) not in challenge_data "
            f"({_all_files(queries)}): {', '.join(unknown.to_pylist())}."
        )
    empty_mask = pc.equal(pc.list_value_length(answers["pos_item_ids"]), 0)
    empty = pc.filter(answers["question_id"], empty_mask)
    if len(empty):
        listed = ", ".join(empty.to_pylist())
        raise M2krDataError(f"{_files_of(answers, empty_mask)}: no positive passage for question_id(s) {listed}.")
    known = set(passages["passage_id"].to_pylist())
    unknown_positives = [[pid for pid in pids if pid not in known] for pids in answers["pos_item_ids"].to_pylist()]
    bad = [
        f'question_id "{qid}" -> {", ".join(pid if pid is not None else "null" for pid in pids)}'
        for qid, pids in zip(answers["question_id"].to_pylist(), unknown_positives)
        if pids
    ]
    if bad:
        raise M2krDataError(
            f"{_files_of(answers, pa.array([bool(pids) for pids in unknown_positives]))}: positives not in "
            f"challenge_passage.passage_id ({_all_files(passages)}): {'; '.join(bad)}."
        )
