"""MIPR's format rules, stated once: the source schemas, the grades and the checks of the three JSON Lines tables.

The builder (``mipr.py``) and scoring (``mmrhub.benchmarks.mipr``) both validate with these functions, so they accept
and refuse the same files with the same :class:`MiprDataError` naming the file and the line or id. Only pyarrow and
numpy are imported (scoring never imports ``datasets``); local files are opened by ``mmr_inputs`` (regular files
only), URLs with the caller's ``opener`` (the builder's).
"""

import json
import logging
import math
import os
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj

# The one way in for files, beside this file: see the comment in mipr.py on why a sibling is imported so.
# fmt: off
if __package__: \
from .mmr_inputs import InputError, check_utf8, load_json, open_input, require_utf8
else:
    from mmr_inputs import InputError, check_utf8, load_json, open_input, require_utf8
# fmt: on

# The builder's logger: these are its warnings, whoever reads the files.
logger = logging.getLogger("mipr")

CONFIG_NAMES = ("queries", "corpus", "qrels")
# Relevance grades as data: the MIPR README's definition of each label.
GRADES = {
    "L1": "Optimal solution: satisfies the underlying need and its key constraints",
    "L2": "Suboptimal solution: relevant but only partially satisfies the need",
    "N1": "Constraint-violating: appears applicable but violates a critical constraint",
    "N2": "Related non-solution: related by category or appearance but does not solve the need",
    "N3": "Irrelevant",
}
SOURCE_FILES = {
    "queries": "mipr_query.jsonl",
    "corpus": "mipr_corpus.jsonl",
    "qrels": "mipr_annotation.jsonl",
}
IMAGE_DIRS = {"queries": "images/query_images", "corpus": "images/product_images"}
IMAGE_NAME_FIELDS = {"queries": "image_url", "corpus": "pict_url"}
ID_FIELDS = {"queries": "idx", "corpus": "item_id", "qrels": "idx"}

# pyarrow's default JSON block; a longer line is read again with a block that holds it.
_BLOCK_SIZE = 1 << 20

_JUDGMENT = pa.struct([("item_id", pa.string()), ("final_grade", pa.string())])
SOURCE_SCHEMAS = {
    "queries": pa.schema([("idx", pa.string()), ("query", pa.string()), ("image_url", pa.string())]),
    "corpus": pa.schema(
        [
            ("item_id", pa.string()),
            ("title", pa.string()),
            ("pict_url", pa.string()),
            ("treecate_full_path", pa.string()),
        ]
    ),
    "qrels": pa.schema([("idx", pa.string()), ("items", pa.list_(_JUDGMENT))]),
}


class MiprDataError(ValueError):
    """A MIPR source file does not follow the official format."""


def join_path(base: str, relative: str) -> str:
    """``base``/``relative``, for a local folder or a URL."""
    return base.rstrip("/") + "/" + relative if "://" in base else os.path.join(base, relative)


def read_config(
    name: str, base: str, paths: Optional[dict] = None, opener=None, read: Optional[dict] = None
) -> pa.Table:
    """Config ``name``'s table from the folder or URL ``base``, checked as the builder checks it (the image folders
    aside): ``qrels`` against the query and product ids, ``queries`` and ``corpus`` for their image names.

    ``paths``: where each source file (``SOURCE_FILES``' keys) is read from, when not at its place under ``base``
    (the download cache's copies); messages name the files under ``base``. ``read``: the ``queries`` and
    ``corpus`` tables this caller has already read and checked, whose ids ``qrels`` then uses instead of reading
    those files again.
    """
    names = ["qrels", "queries", "corpus"] if name == "qrels" else [name]
    shown = {config: join_path(base, SOURCE_FILES[config]) for config in names}
    paths = paths or shown
    read = read or {}
    if name == "qrels":
        queries, corpus = read.get("queries"), read.get("corpus")
        if queries is None:
            queries = read_table(paths["queries"], "queries", opener, shown["queries"], ["idx"])
        if corpus is None:
            corpus = read_table(paths["corpus"], "corpus", opener, shown["corpus"], ["item_id"])
        table = read_table(paths["qrels"], "qrels", opener, shown["qrels"])
        check_qrels(table, queries["idx"], corpus["item_id"], shown["qrels"])
        return table
    table = read_table(paths[name], name, opener, shown[name])
    check_image_names(table[IMAGE_NAME_FIELDS[name]], join_path(base, IMAGE_DIRS[name]), shown[name])
    return table


def read_table(path: str, name: str, opener=None, display: Optional[str] = None, columns=None) -> pa.Table:
    """Read and validate one MIPR JSON Lines table (``name`` in CONFIG_NAMES) into Arrow.

    ``columns`` reads only those fields (other fields are then not checked), e.g. the ids of a joined table.
    """
    display = display or path
    schema = SOURCE_SCHEMAS[name]
    if columns:
        schema = pa.schema([schema.field(column) for column in columns])
    # Fields outside the format are never inferred: pyarrow's type inference crashes the process on a field nested
    # some 100,000 levels deep. They are named, from Python's json (which bounds nesting), and left out.
    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore" if columns else "error")
    try:
        try:
            table = _parse_json_lines(path, options, opener)
        except pa.ArrowInvalid as err:
            if columns or "unexpected field" not in str(err):
                raise
            ignoring = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
            table = _parse_json_lines(path, ignoring, opener)
            _warn_unexpected_fields(path, schema, display, opener)
        # pyarrow's JSON reader passes invalid UTF-8 through: a full validation of the strings catches it.
        table.validate(full=True)
        lines = _record_lines(path, opener)
        if lines != table.num_rows:
            shape = "a line that is not one object" if lines is None else f"{lines} lines"
            _raise_first_bad_line(path, schema, display, opener, cause=f"{table.num_rows} records, {shape}")
    except InputError as err:
        raise MiprDataError(str(err)) from None
    except pa.ArrowInvalid as err:
        if _record_lines(path, opener) == 0:  # pyarrow's words for it: "Empty JSON file"
            table = None
        else:
            _raise_first_bad_line(path, schema, display, opener, cause=str(err))
    if table is None or not table.num_rows:  # the builder and scoring refuse alike: every table has a record
        raise MiprDataError(
            f"{display}: no records. A MIPR {name} file has at least one; the file was written empty or cut short."
        )
    table = table.select(schema.names).cast(schema)
    if any(table[field].null_count for field in schema.names) or (name == "qrels" and _has_null_judgment(table)):
        _raise_first_bad_line(path, schema, display, opener, cause="null field")
    if ID_FIELDS[name] in schema.names:
        _check_unique(table, ID_FIELDS[name], path, display, opener)
    if name == "qrels":
        _check_judgments(table, display)
    return table


def _parse_json_lines(path: str, options: paj.ParseOptions, opener) -> pa.Table:
    """Parse a JSON Lines file; a line longer than the reader's block (1 MiB) gets a block that holds it."""
    try:
        return _read_json(path, options, opener, _BLOCK_SIZE)
    except pa.ArrowInvalid as err:
        if "straddl" not in str(err):
            raise
    longest = max((len(line) for _, _, line in _lines(path, opener)), default=0)
    return _read_json(path, options, opener, longest + 1)


def _read_json(path: str, options: paj.ParseOptions, opener, block_size: int) -> pa.Table:
    with open_input(path, opener) as f:
        require_utf8(path, f)
        return paj.read_json(f, read_options=paj.ReadOptions(block_size=block_size), parse_options=options)


def _record_lines(path: str, opener) -> Optional[int]:
    """The number of non-blank lines when each, stripped, begins with "{" and ends with "}"; None when one does not.

    pyarrow's JSON reader reads a stream of JSON values, whatever the lines: two objects on one line are two rows,
    an object spread over lines is one. It refuses a raw newline in a string, and outside strings "}" then "{"
    (whitespace between) can only part two top-level values; so lines of this shape each hold whole records, and
    exactly one each when there are as many lines as the rows pyarrow read.
    """
    count = 0
    for _, _, line in _lines(path, opener):
        line = line.strip()
        if line[:1] != b"{" or line[-1:] != b"}":
            return None
        count += 1
    return count


def _warn_unexpected_fields(path: str, schema: pa.Schema, display: str, opener):
    extra = {}
    for _, record in _records(path, display, opener):
        if isinstance(record, dict):
            extra.update(dict.fromkeys(field for field in record if field not in schema.names))
            items = record.get("items") if "items" in schema.names else None
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict):
                    extra.update(dict.fromkeys(f"items.{field}" for field in item if field not in _JUDGMENT.names))
    logger.warning("%s: fields not in the MIPR format are left out: %s", display, ", ".join(extra))


def _has_null_judgment(table: pa.Table) -> bool:
    items = pc.list_flatten(table["items"])
    return bool(items.null_count or pc.struct_field(items, [0]).null_count or pc.struct_field(items, [1]).null_count)


def _lines(path: str, opener):
    """(line number, byte offset, bytes) of each non-blank line, one held at a time: error paths and the line
    check (``_record_lines``) never hold the file's bytes. A UTF-8 byte order mark at the start of the file is
    dropped, as the JSON reader does."""
    with open_input(path, opener) as f:
        offset = require_utf8(path, f)
        if offset:
            f.seek(offset)
        for number, line in enumerate(f, start=1):
            if line.strip():
                yield number, offset, line
            offset += len(line)


def _records(path: str, display: str, opener):
    """(line number, record) of each non-blank line, read by Python's json: one record per line, each key once, or
    a MiprDataError naming the line (and the byte offset of an undecodable byte)."""
    try:
        for number, offset, line in _lines(path, opener):
            check_utf8(display, line, offset, number)
            yield number, load_json(display, line.rstrip(b"\r\n"), number, offset, unique_keys=True)
    except InputError as err:
        raise MiprDataError(str(err)) from None


def _raise_first_bad_line(path: str, schema: pa.Schema, display: str, opener, cause: str):
    for number, record in _records(path, display, opener):
        problem = _text_problem(record) or _record_problem(record, schema) or _number_problem(record)
        if problem:
            raise MiprDataError(f"{display} line {number}: {problem}.")
    raise MiprDataError(f"{display}: could not be read as JSON Lines ({cause}).")


def _text_problem(record) -> Optional[str]:
    """A lone surrogate escape (such as \\ud800) decodes to no character, so no UTF-8 text can hold it."""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:
        return f"the escape \\u{ord(err.object[err.start]):04x} is a lone surrogate, not a character"
    return None


def _number_problem(record) -> Optional[str]:
    """pyarrow refuses a number beyond a double or 64 bits in any field, even one the format leaves out."""
    for field, value in record.items():
        if _out_of_range(value):
            return f'field "{field}" holds a number beyond a double or a 64-bit integer, which pyarrow cannot read'
    return None


def _out_of_range(value) -> bool:
    if isinstance(value, dict):
        return any(map(_out_of_range, value.values()))
    if isinstance(value, list):
        return any(map(_out_of_range, value))
    if isinstance(value, float):
        return math.isinf(value)
    return isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 64


def _record_problem(record, schema: pa.Schema) -> Optional[str]:
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    for field in schema.names:
        if record.get(field) is None:
            return f'missing field "{field}"'
        if field == "items":
            problem = _items_problem(record[field])
            if problem:
                return problem
        elif not isinstance(record[field], str):
            return f'field "{field}" must be a string, got {type(record[field]).__name__} {record[field]!r}'
    return None


def _items_problem(items) -> Optional[str]:
    if not isinstance(items, list):
        return f'field "items" must be a list of {{"item_id", "final_grade"}} objects, got {type(items).__name__}'
    for position, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            return f"items[{position}] must be an object, got {type(item).__name__}"
        for field in ("item_id", "final_grade"):
            if not isinstance(item.get(field), str):
                return f'items[{position}] field "{field}" must be a string, got {item.get(field)!r}'
    return None


def _check_unique(table: pa.Table, field: str, path: str, display: str, opener):
    column = table[field]
    if pc.count_distinct(column).as_py() == len(column):
        return
    first_line = {}
    for number, record in _records(path, display, opener):
        value = record[field]
        if value in first_line:
            first = first_line[value]
            raise MiprDataError(f'{display} line {number}: duplicate {field} "{value}" (first on line {first}).')
        first_line[value] = number
    raise MiprDataError(f"{display}: duplicate {field} values that Python's json does not see; read as JSON Lines.")


def _check_judgments(table: pa.Table, display: str):
    """Every grade is known and no product is judged twice for one query (vectorised; Python only on error)."""
    judged = pc.list_flatten(table["items"])
    rows = pc.list_parent_indices(table["items"])
    item_ids, grades = pc.struct_field(judged, [0]), pc.struct_field(judged, [1])
    unknown = pc.invert(pc.is_in(grades, value_set=pa.array(list(GRADES))))
    if pc.any(unknown).as_py():
        at = pc.index(unknown, True).as_py()
        raise MiprDataError(
            f'{display} {_judgment_name(table, rows, at)}: unknown final_grade "{grades[at].as_py()}"; '
            f"expected one of {', '.join(GRADES)}."
        )
    # (row, product code) pairs as sorted integers: a hash-based distinct count would take ~100 MB here.
    codes = pc.dictionary_encode(item_ids.combine_chunks())
    pairs = np.sort(rows.to_numpy() * len(codes.dictionary) + codes.indices.to_numpy())
    if (pairs[1:] == pairs[:-1]).any():
        seen = set()
        for at, pair in enumerate(zip(rows.to_pylist(), item_ids.to_pylist())):
            if pair in seen:
                raise MiprDataError(f'{display} {_judgment_name(table, rows, at)}: item_id "{pair[1]}" judged twice.')
            seen.add(pair)


def _judgment_name(table: pa.Table, rows, at: int) -> str:
    """'idx "7" items[3]' for the flattened judgment at position ``at``."""
    row = rows[at].as_py()
    first_of_row = pc.index(rows, row).as_py()
    return f'idx "{table["idx"][row].as_py()}" items[{at - first_of_row + 1}]'


def check_qrels(qrels: pa.Table, query_ids: pa.ChunkedArray, item_ids: pa.ChunkedArray, display: str):
    """Every judged query must be in the queries file and every judged product in the corpus."""
    unknown_queries = pc.invert(pc.is_in(qrels["idx"], value_set=query_ids.combine_chunks()))
    if pc.any(unknown_queries).as_py():
        idx = pc.filter(qrels["idx"], unknown_queries)[0].as_py()
        raise MiprDataError(f'{display} idx "{idx}": query not in {SOURCE_FILES["queries"]}.')
    judged = pc.list_flatten(qrels["items"])
    unknown_items = pc.invert(pc.is_in(pc.struct_field(judged, [0]), value_set=item_ids.combine_chunks()))
    if pc.any(unknown_items).as_py():
        position = pc.index(unknown_items, True).as_py()
        item_id = pc.struct_field(judged, [0])[position].as_py()
        name = _judgment_name(qrels, pc.list_parent_indices(qrels["items"]), position)
        raise MiprDataError(f'{display} {name}: judged item_id "{item_id}" not in {SOURCE_FILES["corpus"]}.')


def check_image_names(names: pa.ChunkedArray, image_dir: str, display: str):
    """Image names are plain file names, so a reference can never point outside the image folder."""
    bad = [name for name in pc.unique(names).to_pylist() if "/" in name or "\\" in name or name in ("", ".", "..")]
    if bad:
        listed = ", ".join(bad)
        raise MiprDataError(f"{display}: image names must be plain file names under {image_dir}/, got: {listed}")
