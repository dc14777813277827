"""Shared by the MIPR and M2KR metric folders (copied, so each stands alone; a test keeps the copies identical)."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def string_lists(values, name, depth=None, like=None):
    """One list of strings per query (Python or Arrow lists) -> (int64 lengths, flat strings), each list cut at
    ``depth``, or as long as ``like``'s; dictionary-encoded Arrow strings stay encoded."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ValueError(f"{name}: expected one list of strings per query, got {type(values).__name__}")
        if isinstance(values, dict):  # {query id: ranking}: its keys would be taken for the rows
            raise ValueError(
                f"{name}: expected one list of strings per query, got dict; for a run keyed by query id pass "
                f"{name}=list(run.values()) and query_ids=list(run)"
            )
        values = values if hasattr(values, "__getitem__") else list(values)  # an iterator, read once
        bad = next((i for i, row in enumerate(values) if isinstance(row, (str, bytes))), None)
        if bad is not None:
            raise ValueError(f"{name}: row {bad + 1} is a string ({values[bad]!r}), expected a list of strings")
        try:
            values = pa.array([row if row is None else row[:depth] for row in values], pa.list_(pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as err:
            raise ValueError(
                f"{name}: {_first_non_string(values) or err}, expected one list of strings per query"
            ) from None
    values = pc.list_slice(values, 0, depth) if depth and len(values) else values
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if values.null_count:
        raise ValueError(f"{name}: row {np.argmax(values.is_null()) + 1} is null, expected a list of strings")
    lengths, flat = pc.list_value_length(values).to_numpy().astype(np.int64), values.flatten()
    if flat.null_count:
        raise ValueError(f"{name}: {where(lengths, np.argmax(flat.is_null()))} is null, expected a string")
    if like is not None and (len(lengths) != len(like) or (lengths != like).any()):
        row = int(np.argmax(lengths != like)) if len(lengths) == len(like) else None
        raise ValueError(
            f"{name}: {len(lengths)} lists for {len(like)} queries"
            if row is None
            else f"{name}: row {row + 1} has {lengths[row]} values for {like[row]} item ids"
        )
    return lengths, flat if pa.types.is_dictionary(flat.type) else flat.cast(pa.string())


def _first_non_string(rows):
    """Where a list of lists first holds something other than a string (found only once conversion failed)."""
    for i, row in enumerate(rows):
        if row is not None and not isinstance(row, (list, tuple, np.ndarray)):
            return f"row {i + 1} is {type(row).__name__} {row!r}"
        for j, item in enumerate(row if row is not None else ()):
            if not isinstance(item, str):
                return f"row {i + 1}, position {j + 1} is {type(item).__name__} {item!r}"
    return None


def where(lengths, index, query_ids=None):
    """A flat index as "query ID, position P" (or "row R, position P" without query ids), both counted from 1."""
    row = int(np.searchsorted(np.cumsum(lengths), index, side="right"))
    name = f"query {query_ids[row]!r}" if query_ids is not None else f"row {row + 1}"
    return f"{name}, position {index - int(lengths[:row].sum()) + 1}"


# The argument checks of the metric modules, which the mmrhub commands use for their options too: each refusal a
# ValueError naming the argument (when given a name) and what was expected.
MAX_CUTOFF = 1000  # scoring lays a run out as (queries x deepest cutoff): a bound keeps that in memory


def _named(name):
    return f"{name}: " if name else ""


def whole_number(value, low, high, name=None):
    """``value`` (an int, or its text as typed) as an int from ``low`` to ``high``."""
    expected = f"{_named(name)}expected a whole number from {low:,} to {high:,}"
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"{expected}, got {value!r}") from None
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{expected}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{expected}, got {value:,}")
    return int(value)


def real_number(value, low, high, name=None):
    """``value`` (a number, or its text as typed) as a float from ``low`` to ``high``."""
    expected = f"{_named(name)}expected a number from {low} to {high}"
    try:
        number = (
            float(value) if isinstance(value, (str, int, float, np.number)) and not isinstance(value, bool) else None
        )
    except ValueError:
        number = None
    if number is None or not low <= number <= high:  # NaN fails the comparison too
        raise ValueError(f"{expected}, got {value!r}")
    return number


def one_of(value, choices, name=None):
    """``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{_named(name)}{value!r} is not one of {', '.join(choices)}")
    return value


def names_from(values, choices, name):
    """A non-empty list of ``choices`` (a tuple, without repeats kept)."""
    if isinstance(values, str) or not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{name}: expected a non-empty list of any of {', '.join(choices)}, got {values!r}")
    return tuple(dict.fromkeys(one_of(value, choices, name) for value in values))


def flag(value, name):
    """``value`` if it is a real bool: ``"no"`` is not False."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def check_cutoffs(k, name="k"):
    """The cutoffs (a list, or one int) sorted and distinct, each from 1 to ``MAX_CUTOFF``."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        k = [k]
    if isinstance(k, str) or not isinstance(k, (list, tuple, np.ndarray)) or not len(k):
        raise ValueError(f"{name}: expected a non-empty list of cutoffs from 1 to {MAX_CUTOFF:,}, got {k!r}")
    return tuple(sorted({whole_number(cutoff, 1, MAX_CUTOFF, name) for cutoff in k}))


def check_batch(batch: dict, module: str):
    """An ``add_batch`` (or ``compute``) call's columns: every one given, each one list of strings per query."""
    missing = [name for name, column in batch.items() if column is None]
    if missing:
        raise ValueError(
            f"{module}: {', '.join(missing)} missing; every batch needs {', '.join(batch)} together (pass them all "
            "to the same add_batch or compute call)"
        )
    rows = {}
    for name, column in batch.items():
        rows[name] = len(column if isinstance(column, (pa.Array, pa.ChunkedArray)) else string_lists(column, name)[0])
    if len(set(rows.values())) > 1:
        counts = ", ".join(f"{name} {count}" for name, count in rows.items())
        raise ValueError(f"{module}: rows per column differ ({counts}); every column has one row per query")


def table_columns(table, columns, name="queries"):
    """A table as a page sends it (one row per query, a cell per column: a JSON list of strings, or comma-separated
    values) -> {column: one list of strings per query}; rows without any text are left out. A row or cell that is
    neither is refused naming its row and column."""
    if isinstance(table, (str, bytes)) or not isinstance(table, (list, tuple)):
        raise ValueError(f"{name}: expected a table (a list of rows), got {type(table).__name__}")
    found = {column: [] for column in columns}
    for number, row in enumerate(table, 1):
        if isinstance(row, (str, bytes)) or not isinstance(row, (list, tuple)) or len(row) != len(columns):
            got = f"{len(row)} cell(s)" if isinstance(row, (list, tuple)) else type(row).__name__
            raise ValueError(f"{name}: row {number} has {got}, expected {len(columns)} ({', '.join(columns)})")
        if all(cell is None or (isinstance(cell, str) and not cell.strip()) for cell in row):
            continue
        for column, cell in zip(columns, row):
            found[column].append(cell_values(cell, f"{name}: row {number}, column {column}"))
    return found


def cell_values(cell, where):
    """One cell's strings: a JSON list of strings (``["a", "b"]``), else comma-separated values (``a, b``)."""
    expected = "expected a JSON list of strings or comma-separated values"
    if cell is None:
        return []
    if not isinstance(cell, str):
        raise ValueError(f"{where}: {type(cell).__name__} {cell!r:.40}, {expected}")
    text = cell.strip()
    if not text.startswith("["):
        return [part.strip() for part in text.split(",") if part.strip()]
    try:
        values = json.loads(text)
    except RecursionError:
        raise ValueError(f"{where}: lists nested too deep, {expected}") from None
    except ValueError as err:
        raise ValueError(
            f"{where}: {text!r:.60} is not JSON ({err.msg}, character {err.pos + 1}), {expected}"
        ) from None
    for position, value in enumerate(values, 1):  # a list: the text starts with [
        if not isinstance(value, str):
            kind = (
                "null"
                if value is None
                else {list: "a list", dict: "an object", bool: "true or false"}.get(
                    type(value), f"the number {value!r}"
                )
            )
            raise ValueError(f"{where}, position {position}: {kind}, expected a string (an id in quotes)")
    return values


def cutoff_list(text, name="k"):
    """Comma-separated cutoffs as typed, each a whole number from 1 to ``MAX_CUTOFF``."""
    if not isinstance(text, (str, int)) or isinstance(text, bool):
        raise ValueError(f"{name}: expected comma-separated cutoffs, got {type(text).__name__}")
    return [whole_number(part, 1, MAX_CUTOFF, name) for part in str(text).split(",") if part.strip()]


class Pairs:
    """Each row's ids as sorted int64 keys ``row * len(ids) + id code``, refused if a row lists an id twice."""

    def __init__(self, lengths, ids, name, query_ids=None):
        self.query_ids = None if query_ids is None else list(query_ids)
        if self.query_ids is not None and len(self.query_ids) != len(lengths):
            raise ValueError(f"{len(self.query_ids)} query ids for {len(lengths)} queries")
        self.rows, self.num_rows = np.repeat(np.arange(len(lengths)), lengths), len(lengths)
        encoded = pc.dictionary_encode(ids)  # ids already encoded are kept as they are
        self.ids, self.codes = encoded.dictionary, encoded.indices.to_numpy()
        keys = self.rows * len(self.ids) + self.codes
        if (keys[1:] > keys[:-1]).all():  # each row's ids in code order, none twice (as mmrhub caches judgments)
            order = np.arange(len(keys))
        else:
            order = np.argsort(keys, kind="stable")
            again = order[1:][keys[order[1:]] == keys[order[:-1]]]
            if len(again):
                at = int(again.min())
                place = where(lengths, at, self.query_ids)
                raise ValueError(f"{name}: {place} lists {ids[at].as_py()!r} a second time")
            keys = keys[order]
        # a last key above every pair's, so that every lookup lands on a key; its position -1 means "no pair"
        self.keys, self.order = np.append(keys, np.iinfo(np.int64).max), np.append(order, -1)

    def find(self, rankings, depth=None):
        """(rows x depth) positions of the ranked ids' pairs (default depth: the longest ranking), -1 for none."""
        lengths, ranked = string_lists(rankings, "predictions", depth)
        if len(lengths) != self.num_rows:
            raise ValueError(f"{len(lengths)} rankings for {self.num_rows} queries")
        run = Pairs(lengths, ranked, "predictions", self.query_ids)
        known = pc.index_in(run.ids, value_set=self.ids).fill_null(-1).to_numpy()[run.codes]
        keys = run.rows * len(self.ids) + known
        at = np.searchsorted(self.keys, keys)
        found = np.full((len(lengths), depth or max(int(lengths.max(initial=0)), 1)), -1)
        positions = np.arange(len(keys)) - (np.cumsum(lengths) - lengths)[run.rows]
        found[run.rows, positions] = np.where((known >= 0) & (self.keys[at] == keys), self.order[at], -1)
        return found


def summary(scores, query_ids, per_query):
    """Means (None: a mean over no query; NaN values are left out), and optionally each query's (None: left out)."""
    result = {name: float(np.nanmean(v)) if (~np.isnan(v)).any() else None for name, v in scores.items()}
    if per_query:
        ids = {} if query_ids is None else {"query_id": list(query_ids)}
        result["per_query"] = {**{name: np.where(np.isnan(v), None, v).tolist() for name, v in scores.items()}, **ids}
    return result
