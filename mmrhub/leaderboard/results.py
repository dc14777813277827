"""One file per board entry, ``results/<name>-<hash>.json``: the run's name, its full table as ``mmrhub evaluate``
prints it (every measure and count, the per-group means), every query's values (what ``compare``'s test needs),
what the run file was (name, format, sha256) and what its record says, the judgments and options it was scored
with, and the run's rankings only when asked.

A result file may come from anyone (a pull request to the Space): it is read with a size bound and checked against
what the board's own judgments give, field by field (the same queries, the same measures and counts, values in [0,
1], each mean equal to its per-query values' and each group's mean to ``group_means``'), and refused in one line
naming the file and the field otherwise."""

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pyarrow as pa

from mmr_inputs import load_json_file
from mmrhub import __version__
from mmrhub.declaration import Benchmark
from mmrhub.leaderboard.board import RESULTS
from mmrhub.leaderboard.board import Board
from mmrhub.leaderboard.records import MAX_TEXT
from mmrhub.leaderboard.records import read_record
from mmrhub.leaderboard.records import sha256_of
from mmrhub.scoring.groups import group_means
from mmrhub.scoring.score import Scored
from mmrhub.scoring.score import score
from mmrhub.scoring.score import score_runs
from mmrhub.terminal import printable

FORMAT = "mmrhub-leaderboard-result/1"
MAX_RESULT = 1 << 28  # bytes of a result file: a full MIPR entry with its rankings is a few MB
MAX_NAME = 100  # characters of an entry's name
MAX_NOTES = 20
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
TOLERANCE = 1e-9  # a mean against its per-query values: what summing in another order may change


@dataclass
class Entry:
    """A board row: its name, ``result`` as ``score_runs`` gives it (measures, counts, ``per_query``, the per-group
    means), and the rest of its result file (``data``: run, record, notes); ``file``: where it was read from."""

    name: str
    result: dict
    data: dict
    file: str

    @property
    def record(self) -> Optional[dict]:
        """What the run's record says (``records.summary``), or None."""
        return self.data.get("record")

    @property
    def run(self) -> dict:
        """The run file: name, format, sha256, queries."""
        return self.data.get("run") or {}

    @property
    def notes(self) -> list:
        """What was said when the run was scored."""
        return self.data.get("notes") or []


def check_name(name: str) -> str:
    """An entry's name: 1 to MAX_NAME characters, no control character; an error saying what is expected."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("the entry's name is empty: give the run a name.")
    if len(name) > MAX_NAME or _CONTROL.search(name):
        raise ValueError(
            f"the entry's name {printable(name[:MAX_NAME])!r} is not a name: expected at most {MAX_NAME} characters "
            "and no control character (tab, newline)."
        )
    return name.strip()


def file_name(name: str) -> str:
    """``<name>-<8 hex>.json``: the name's letters and digits (others as '-'), then a hash of the whole name, so two
    names never share a file and no name makes a path."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "entry"
    return f"{slug}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}.json"


def options_of(board: Board) -> dict:
    """What a result records of how it was scored: the board's measure options and run readings."""
    return {
        "measure_options": board.measure_options,
        "trec_order": board.trec_order,
        "missing_queries": board.missing_queries,
        "ignore_unknown_queries": board.ignore_unknown_queries,
    }


def result_of(row: Scored, board: Board, benchmark: Benchmark, run: dict, record, notes, rankings=None) -> dict:
    """The result file's content for a scored row; ``run``: {file, format, sha256, queries}."""
    result = dict(row.result)
    per_query = result.pop("per_query")
    breakdown = result.pop(benchmark.breakdown.key)
    return {
        "format": FORMAT,
        "benchmark": benchmark.name,
        "name": row.name,
        "scored_by": f"mmrhub {__version__}",
        "judgments": board.judgments["files"],
        "options": options_of(board),
        "run": run,
        "table": result,
        "breakdown": breakdown,
        "per_query": per_query,
        "missing_queries_scored_zero": row.missing,
        "notes": [printable(note)[:MAX_TEXT] for note in notes if note][:MAX_NOTES],
        "record": record,
        **({"rankings": rankings} if rankings is not None else {}),
    }


def score_files(request, truth, board: Board, with_rankings: bool = False, shown_as=None) -> list:
    """Each run file of ``request`` read, validated and scored as ``evaluate`` does, as a result file's content;
    ``shown_as``: the name a file is given in the run field (an upload's own name, not its temporary path)."""
    rows = score_runs(request, truth)
    results = []
    for row in rows:
        path = Path(row.run.path)
        record, note = read_record(path)
        run = {
            "file": (shown_as or {}).get(str(path), path.name),
            "format": row.run.format,
            "sha256": sha256_of(path),
            "queries": len(row.run.query_ids),
        }
        rankings = None
        if with_rankings:
            rankings = {"query_id": row.run.query_ids.to_pylist(), "ranked": row.run.rankings.to_pylist()}
        results.append(result_of(row, board, request.benchmark, run, record, [*row.run.notes, note], rankings))
    return results


def entry_of(data: dict, benchmark: Benchmark, file: str) -> Entry:
    """A result file's content as a board row (not checked: ``check_result`` first, for a file from elsewhere)."""
    result = {**data["table"], "per_query": data["per_query"], benchmark.breakdown.key: data["breakdown"]}
    return Entry(data["name"], result, data, file)


def template(benchmark: Benchmark, truth, options: dict) -> dict:
    """What every result of the board holds, from its judgments: the result of a run ranking nothing (its keys, its
    counts, which queries each measure leaves out) and each judged query's group."""
    empty = pa.ListArray.from_arrays(
        pa.array([0] * (len(truth.query_ids) + 1), pa.int32()),
        pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), truth.corpus_ids),
    )
    return {"result": score(benchmark, truth, empty, options), "groups": truth.groups()}


def check_result(data, where: str, board: Board, benchmark: Benchmark, expected: dict) -> dict:
    """``data`` (a result file's content, from ``where``) checked against the board and ``expected``
    (``template``); one line naming ``where`` and the field otherwise."""

    def refuse(field: str, what: str):
        raise ValueError(f"{where}: {field}: {what}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        refuse("format", f"not a board entry ({FORMAT!r} expected).")
    if data.get("benchmark") != benchmark.name:
        refuse("benchmark", f"an entry of {printable(str(data.get('benchmark')))[:40]!r}, not of {benchmark.name}.")
    if data.get("scored_by") != f"mmrhub {board.mmrhub}":
        refuse("scored_by", f"{str(data.get('scored_by'))[:40]!r}, not this board's mmrhub {board.mmrhub}.")
    if data.get("judgments") != board.judgments["files"]:
        refuse("judgments", "scored against other judgment tables than this board's (their sha256 differ).")
    if data.get("options") != options_of(board):
        refuse("options", f"scored with other options than this board's ({json.dumps(options_of(board))}).")
    try:
        check_name(data.get("name"))
    except ValueError as err:
        refuse("name", str(err))
    result, per_query = expected["result"], expected["result"]["per_query"]
    table = data.get("table")
    keys = [key for key in result if key not in ("per_query", benchmark.breakdown.key)]
    if not isinstance(table, dict) or sorted(table) != sorted(keys):
        refuse("table", f"expected exactly the measures and counts {', '.join(keys)}.")
    for key in keys:
        if isinstance(result[key], int) and not isinstance(result[key], bool):
            if table[key] != result[key]:
                refuse(f"table.{key}", f"{table[key]!r:.40}, but this board's judgments give {result[key]}.")
        elif not _score(table[key]):
            refuse(f"table.{key}", f"{table[key]!r:.40} is not a score in [0, 1] (or null).")
    values = data.get("per_query")
    if not isinstance(values, dict) or sorted(values) != sorted(per_query):
        refuse("per_query", f"expected the columns {', '.join(per_query)}.")
    if values["query_id"] != per_query["query_id"]:
        refuse("per_query.query_id", "not this board's judged queries, in its order.")
    for name, column in values.items():
        if name == "query_id":
            continue
        wanted = per_query[name]
        if not isinstance(column, list) or len(column) != len(wanted):
            refuse(f"per_query.{name}", f"expected a list of {len(wanted)} values.")
        for index, (value, shape) in enumerate(zip(column, wanted)):
            if (value is None) != (shape is None) or value is not None and not _score(value):
                refuse(f"per_query.{name}", f"query {values['query_id'][index]!r}: {value!r:.40} is not its value.")
        if name in table and not _same(table[name], _mean(column)):
            refuse(f"table.{name}", f"{table[name]!r} is not the mean of its per-query values ({_mean(column)!r}).")
    breakdown = data.get("breakdown")
    means = group_means(values, expected["groups"])
    if not isinstance(breakdown, dict) or not _same(breakdown, means):
        refuse("breakdown", f"not the per-{benchmark.breakdown.label.lower()} means of its per-query values.")
    run = data.get("run")
    if not isinstance(run, dict) or not all(isinstance(run.get(key), str) for key in ("file", "format")):
        refuse("run", "expected the run file's name and format.")
    notes = data.get("notes", [])
    if not isinstance(notes, list) or len(notes) > MAX_NOTES or not all(isinstance(note, str) for note in notes):
        refuse("notes", f"expected at most {MAX_NOTES} lines of text.")
    record = data.get("record")
    if record is not None and not _flat_record(record):
        refuse("record", "expected an object of texts, flags and a versions object, as a run's record summary.")
    return data


def read_entries(folder, board: Board, benchmark: Benchmark, expected: dict) -> tuple:
    """(entries, problems): every ``results/*.json`` of a board folder, checked (``check_result``), in file name
    order; a file that fails is left out and named in ``problems`` (one line each). Two entries of one name are
    told apart as name (2), with a note."""
    entries, problems, seen = [], [], {}
    for path in sorted((Path(folder) / RESULTS).glob("*.json")):
        where = f"{RESULTS}/{path.name}"
        try:
            data = check_result(load_json_file(str(path), limit=MAX_RESULT), where, board, benchmark, expected)
        except (OSError, ValueError) as err:  # an InputError (damaged JSON, too large) names the file
            problems.append(printable(str(err)))
            continue
        entry = entry_of(data, benchmark, where)
        seen[entry.name] = seen.get(entry.name, 0) + 1
        if seen[entry.name] > 1:
            entry.data = {
                **data,
                "notes": [*entry.notes, f"two entries are named {entry.name!r}: {where} is this one."],
            }
            entry.name = f"{entry.name} ({seen[entry.name]})"
        entries.append(entry)
    return entries, problems


def result_json(data: dict) -> bytes:
    """A result file's bytes."""
    return (json.dumps(data, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n").encode("utf-8")


def _score(value) -> bool:
    return value is None or isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


def _mean(column: list):
    defined = [value for value in column if value is not None]
    return math.fsum(defined) / len(defined) if defined else None


def _same(a, b) -> bool:
    """Equal, numbers within TOLERANCE (in dicts, at any depth)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE
    return a == b and type(a) is type(b)


def _flat_record(record) -> bool:
    if not isinstance(record, dict):
        return False
    for key, value in record.items():
        if key == "versions":
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in value.items()
            ):
                return False
        elif not isinstance(value, (str, bool)) or isinstance(value, str) and len(value) > MAX_TEXT:
            return False
    return True
