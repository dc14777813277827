"""Run files, read and written: the official JSON, TREC, and the M2KR Kaggle CSV. Torch-free.

Runs are read into Arrow columns by pyarrow's own JSON and CSV readers (a run costs about its file size in
memory, not Python objects per id). When pyarrow refuses a file, the plain Python reader below reads it again
to name the entry or line at fault. Validation against a benchmark is vectorised and names every problem.
"""

import csv
import json
import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as paj

MAX_LISTED = 20
FORMATS = {
    "json": 'the official JSON ([{"qid": ..., "ranked": [{"did": ..., "score": ...}]}])',
    "trec": "TREC (qid Q0 docid rank score tag)",
    "kaggle": "the M2KR Kaggle CSV (question_id,passage_id with a JSON list of passage ids)",
}
_RANKED = pa.list_(pa.struct([("did", pa.string()), ("score", pa.float64())]))
_JSON_SCHEMA = pa.schema([("run", pa.list_(pa.struct([("qid", pa.string()), ("ranked", _RANKED)])))])
_BOM = b"\xef\xbb\xbf"
_JSON_PREFIX, _JSON_SUFFIX = b'{"run": ', b"}\n"
_TREC_COLUMNS = ["qid", "q0", "docid", "rank", "score", "tag"]
_TREC_TYPES = {"qid": pa.dictionary(pa.int32(), pa.string()), "q0": pa.string(), "docid": pa.string(), "rank": pa.int64(), "score": pa.float64(), "tag": pa.string()}


class RunError(ValueError):
    """A run file that cannot be read or does not fit the benchmark; the message names every problem found."""


@dataclass
class Run:
    """One entry per query as the file lists them: ids and scores (null where absent) as Arrow lists."""

    path: str
    format: str
    query_ids: pa.Array
    rankings: pa.ListArray
    scores: Optional[pa.ListArray]  # None: the format has no scores (the Kaggle CSV)
    lines: Optional[pa.ListArray] = None  # text formats: the line of each ranked id
    notes: list = field(default_factory=list)  # what the user should know, e.g. scores that contradict ranks
    problems: list = field(default_factory=list)  # found while reading; validation reports them with its own

    @property
    def name(self) -> str:
        return Path(self.path).name.split(".")[0]

    def origin(self, entry: int) -> str:
        if self.lines is None:
            return f"entry {entry + 1}"
        first = self.lines[entry]
        return f"line {first[0].as_py()}" if len(first) else f"entry {entry + 1}"

    def where(self, entry: int, position: Optional[int] = None) -> str:
        """'query '7' position 3 (line 12)': how a violation is named (1-based)."""
        text = f"query {self.query_ids[entry].as_py()!r}"
        if position is None:
            return f"{text} ({self.origin(entry)})"
        origin = f"line {self.lines[entry][position].as_py()}" if self.lines is not None else self.origin(entry)
        return f"{text} position {position + 1} ({origin})"


# ---------------------------------------------------------------------------------------------------------------
# Reading


def read_run(path) -> Run:
    """Read a run, telling its format from its first bytes (a BOM is skipped); a refusal names the format assumed."""
    path = str(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as err:
        raise RunError(f"{path}: cannot read the run file ({err.strerror or err}).") from None
    bom = len(_BOM) if head.startswith(_BOM) else 0
    if not head[bom:].strip():
        raise RunError(f"{path}: the run file is empty.")
    kind = detect_format(head[bom:])
    try:
        run = {"json": _read_json, "trec": _read_trec, "kaggle": _read_kaggle}[kind](path, bom)
    except RunError as err:
        raise RunError(f"{err} (read as {FORMATS[kind]})") from None
    pa.default_memory_pool().release_unused()  # the reader's freed buffers, which pyarrow's pool would keep
    return run


def _file_bytes(path: str, bom: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()[bom:]


def detect_format(data: bytes) -> str:
    stripped = data.lstrip()
    if stripped[:1] in (b"[", b"{"):
        return "json"
    first = stripped.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    cells = next(csv.reader([first]), [])
    header = [cell.strip().lower() for cell in cells]
    if header[-2:] == ["question_id", "passage_id"] or (len(cells) in (2, 3) and cells[-1].strip().startswith("[")):
        return "kaggle"
    return "trec"


def _read_json(path: str, bom: int) -> Run:
    # pyarrow reads JSON Lines; the whole array as the one field of one line is exactly that. The file is read
    # once, into a buffer that already holds the wrapping, so the run costs its size plus its Arrow columns.
    size = os.path.getsize(path) - bom
    wrapped = bytearray(len(_JSON_PREFIX) + size + len(_JSON_SUFFIX))
    wrapped[: len(_JSON_PREFIX)], wrapped[len(wrapped) - len(_JSON_SUFFIX) :] = _JSON_PREFIX, _JSON_SUFFIX
    with open(path, "rb") as handle:
        handle.seek(bom)
        handle.readinto(memoryview(wrapped)[len(_JSON_PREFIX) : len(_JSON_PREFIX) + size])
    try:
        table = paj.read_json(
            pa.BufferReader(wrapped),
            read_options=paj.ReadOptions(block_size=len(wrapped) + 1, use_threads=False),
            parse_options=paj.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="ignore"),
        )
        del wrapped
        entries = table["run"].combine_chunks()
        if entries.null_count or len(entries) != 1:
            raise pa.ArrowInvalid("not one array")
        entries = entries.values
        qids, ranked = pc.struct_field(entries, [0]), pc.struct_field(entries, [1])
        if entries.null_count or qids.null_count or ranked.null_count or ranked.values.null_count:
            raise pa.ArrowInvalid("nulls")
        dids = pc.struct_field(ranked.values, [0])
        if dids.null_count:
            raise pa.ArrowInvalid("null ids")
    except pa.ArrowInvalid:
        return _read_json_slowly(path, _file_bytes(path, bom))
    scores = pc.struct_field(ranked.values, [1])
    offsets = _offsets(ranked)
    return Run(path, "json", qids, pa.ListArray.from_arrays(offsets, dids), pa.ListArray.from_arrays(offsets, scores))


def _offsets(lists: pa.ListArray) -> pa.Array:
    """Offsets that start at 0 (a sliced list array's do not)."""
    offsets = lists.offsets
    return pc.subtract(offsets, offsets[0])


def _read_json_slowly(path: str, data: bytes) -> Run:
    """Python's json, to name what pyarrow refused: the entry and position at fault."""
    try:
        entries = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        line = f"line {err.lineno}: " if isinstance(err, json.JSONDecodeError) else ""
        raise RunError(f"{path}: {line}not valid JSON ({getattr(err, 'msg', err)})") from None
    if not isinstance(entries, list):
        raise RunError(f'{path}: expected a JSON array of {{"qid", "ranked"}} objects, got {type(entries).__name__}')
    query_ids, rankings, scores, problems = [], [], [], []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or "qid" not in entry or "ranked" not in entry:
            raise RunError(f'{where}: expected an object with "qid" and "ranked"')
        if not isinstance(entry["qid"], str):
            raise RunError(f'{where}: "qid" must be a string, got {entry["qid"]!r}')
        if not isinstance(entry["ranked"], list):
            raise RunError(f'{where} (query {entry["qid"]!r}): "ranked" must be a list')
        for position, item in enumerate(entry["ranked"], 1):
            if not isinstance(item, dict) or not isinstance(item.get("did"), str):
                raise RunError(f'{where} (query {entry["qid"]!r}) position {position}: expected {{"did": "<id>", "score": <number>}}')
        row_scores = [item.get("score") for item in entry["ranked"]]
        for position, score in enumerate(row_scores, 1):
            if not _is_number(score):
                problems.append(f"query {entry['qid']!r} position {position} (entry {number}): score {score!r} is not a finite number")
        query_ids.append(entry["qid"])
        rankings.append([item["did"] for item in entry["ranked"]])
        scores.append([score if _is_number(score) else None for score in row_scores])
    return Run(path, "json", pa.array(query_ids, pa.string()), pa.array(rankings, pa.list_(pa.string())),
               pa.array(scores, pa.list_(pa.float64())), problems=problems)


def _is_number(value) -> bool:
    """A score may be absent (None) or a JSON number; booleans and strings are not scores."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _read_trec(path: str, bom: int) -> Run:
    """``qid Q0 docid rank score tag`` lines; each query's entries are ordered by their rank column."""
    with open(path, "rb") as handle:
        first = handle.read(1 << 16)[bom:].split(b"\n", 1)[0]
    options = pacsv.ParseOptions(delimiter="\t" if b"\t" in first else " ", quote_char=False, ignore_empty_lines=False)
    try:  # pyarrow's reader streams the file (and skips a BOM); a blank or odd line sends it to the slow path
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=_TREC_COLUMNS, use_threads=False),
            parse_options=options,
            convert_options=pacsv.ConvertOptions(
                column_types=_TREC_TYPES, strings_can_be_null=False, include_columns=["qid", "docid", "rank", "score"]
            ),
        )
        if any(table[name].null_count for name in table.column_names):
            raise pa.ArrowInvalid("nulls")
    except pa.ArrowInvalid:
        return _read_trec_slowly(path, _file_bytes(path, bom))
    columns = table.columns
    del table
    for i, column in enumerate(columns):  # one column at a time, so a run is never held twice
        pa.default_memory_pool().release_unused()  # pyarrow's pool would keep freed memory from the OS
        columns[i] = column = column.combine_chunks()
    qids, dids, ranks, scores = columns
    return _trec_run(path, qids, dids, ranks.to_numpy(), scores, np.arange(1, len(dids) + 1, dtype=np.int32))


def _read_trec_slowly(path: str, data: bytes) -> Run:
    qids, dids, ranks, scores, lines = [], [], [], [], []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise RunError(f"{path}: line {number}: expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}")
        qid, _, did, rank, score, _ = fields
        try:
            ranks.append(int(rank))
        except ValueError:
            raise RunError(f"{path}: line {number}: rank {rank!r} is not an integer") from None
        try:
            scores.append(float(score))
        except ValueError:
            raise RunError(f"{path}: line {number}: score {score!r} is not a number") from None
        qids.append(qid), dids.append(did), lines.append(number)
    return _trec_run(path, pa.array(qids, pa.string()), pa.array(dids, pa.string()), np.array(ranks, np.int64),
                     pa.array(scores, pa.float64()), np.array(lines, np.int32))


def _trec_run(path, qids, dids, ranks, scores, lines) -> Run:
    """Group lines by query (in order of first appearance), each query ordered by its rank column."""
    encoded = pc.dictionary_encode(qids)  # codes in order of first appearance
    unique, query = encoded.dictionary, encoded.indices.to_numpy()
    same_query = query[1:] == query[:-1]
    if (query[1:] >= query[:-1]).all() and ((np.diff(ranks) > 0) | ~same_query).all():
        order = None  # the usual file: grouped by query, in rank order; its columns are used as they are
    else:
        order = np.lexsort((ranks, query))
        query, ranks, lines = query[order], ranks[order], lines[order]
        dids, scores = pc.take(dids, pa.array(order)), pc.take(scores, pa.array(order))
        same_query = query[1:] == query[:-1]
    repeated = np.flatnonzero(same_query & (ranks[1:] == ranks[:-1]))
    if len(repeated):
        at = repeated[0] + 1
        raise RunError(f"{path}: line {lines[at]}: query {unique[int(query[at])].as_py()!r} has rank {ranks[at]} twice")
    offsets = pa.array(np.concatenate([[0], np.cumsum(np.bincount(query, minlength=len(unique)))]), pa.int32())
    run = Run(path, "trec", unique, pa.ListArray.from_arrays(offsets, dids), pa.ListArray.from_arrays(offsets, scores),
              pa.ListArray.from_arrays(offsets, pa.array(lines)))
    score = scores.to_numpy(zero_copy_only=False)  # TREC scores are never null
    disagree = len(np.unique(query[1:][same_query & (score[1:] > score[:-1])]))
    if disagree:
        run.notes.append(
            f"{disagree} queries of {path} have scores that disagree with their rank column: rank wins (the order "
            "scored is the rank column's; pytrec_eval and trec_eval would order by score instead)."
        )
    return run


def _read_kaggle(path: str, bom: int) -> Run:
    """M2KR Kaggle submission: ``question_id,passage_id`` (a JSON list of ids), with or without the header,
    with or without a pandas index column. pyarrow's CSV reader reads the cells and its JSON reader the lists."""
    with open(path, "rb") as handle:
        first = handle.read(1 << 16)[bom:].split(b"\n", 1)[0].decode("utf-8", "replace")
    cells = next(csv.reader([first]), [])
    header = int([cell.strip().lower() for cell in cells][-2:] == ["question_id", "passage_id"])
    names = [f"column{i}" for i in range(len(cells))]
    options = paj.ParseOptions(explicit_schema=pa.schema([("ids", pa.list_(pa.string()))]))
    query_ids, rankings = [], []
    try:  # a block of rows at a time, so that only a block is held twice
        for rows in pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=header, use_threads=False),
            parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False),
        ):
            query_ids.append(pc.utf8_trim_whitespace(rows[names[-2]]))
            # the block's lists as the JSON Lines document {"ids": [...]}, one line per row
            lines = pc.binary_join_element_wise('{"ids": ', rows[names[-1]], "}", "")
            document = pc.binary_join(pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines), "\n")[0]
            rankings.append(paj.read_json(pa.BufferReader(document.as_buffer()), parse_options=options)["ids"].combine_chunks())
        qids, ids = pa.concat_arrays(query_ids), pa.concat_arrays(rankings)
        if len(ids) != len(qids) or ids.null_count or ids.values.null_count:
            raise pa.ArrowInvalid("not one list of ids per row")
    except pa.ArrowInvalid:  # numbers for ids, a blank or odd line, no row: read again below, naming the line
        return _read_kaggle_slowly(path, bom)
    lines = np.repeat(np.arange(1 + header, len(qids) + 1 + header, dtype=np.int32), np.diff(ids.offsets.to_numpy()))
    return Run(path, "kaggle", qids, ids, None, pa.ListArray.from_arrays(ids.offsets, pa.array(lines)))


def _read_kaggle_slowly(path: str, bom: int) -> Run:
    rows = list(csv.reader(_file_bytes(path, bom).decode("utf-8", "replace").splitlines()))
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
    return Run(path, "kaggle", pa.array(query_ids, pa.string()), pa.array(rankings, pa.list_(pa.string())), None,
               pa.array(lines, pa.list_(pa.int64())))


def restore_stripped_ids(run: Run, corpus_ids: pa.Array) -> Run:
    """Kaggle scoring stripped the 'A' of numeric passage ids (A27558 -> 27558): put it back where the corpus has it."""
    ids = run.rankings.values
    prefixed = pc.binary_join_element_wise("A", ids, "")
    restore = pc.and_(pc.invert(pc.is_in(ids, value_set=corpus_ids)), pc.is_in(prefixed, value_set=corpus_ids))
    restore = pc.and_(restore, pc.match_substring_regex(ids, r"^[0-9]+$"))
    fixed = pc.if_else(restore, prefixed, ids)
    run.rankings = pa.ListArray.from_arrays(_offsets(run.rankings), fixed)
    return run


# ---------------------------------------------------------------------------------------------------------------
# Validation


def validate(run: Run, truth, ignore_unknown_queries: bool = False) -> pa.ListArray:
    """Check ``run`` against ``truth`` and return its rankings aligned with ``truth.query_ids``, their ids
    dictionary-encoded with ``truth.corpus_ids`` as the dictionary.

    Every judged query exactly once (queries without judgments may appear and are not scored), every id in the
    corpus and once per ranking, scores finite numbers. ``ignore_unknown_queries`` sets aside the entries of
    queries that are not the benchmark's (a Kaggle file holding another track's rows), with a note saying how many.
    """
    benchmark_queries = pa.concat_arrays([truth.query_ids, truth.unjudged_query_ids])
    known = pc.is_in(run.query_ids, value_set=benchmark_queries).to_numpy(zero_copy_only=False)
    if ignore_unknown_queries and not known.all():
        run.notes.append(f"{int((~known).sum())} entries of {run.path} are not queries of the benchmark and were set "
                         "aside (--ignore-unknown-queries).")
        _keep_entries(run, np.flatnonzero(known))
        known = known[known]
    found = [(len(run.problems), run.problems[:MAX_LISTED])]  # (count, messages of the first few) per kind

    def report(at, message):
        found.append((len(at), [message(int(i)) for i in at[:MAX_LISTED]]))

    report(np.flatnonzero(~known), lambda e: f"{run.where(e)}: not a query of the benchmark")
    query = pc.dictionary_encode(run.query_ids).indices.to_numpy()  # codes in order of first appearance
    first_entry = np.unique(query, return_index=True)[1][query]
    report(np.flatnonzero(first_entry != np.arange(len(query))),
           lambda e: f"{run.where(e)}: appears again (first at {run.origin(first_entry[e])})")
    ids, offsets = run.rankings.values, run.rankings.offsets.to_numpy()
    entry_of = np.repeat(np.arange(len(run.rankings), dtype=np.int32), np.diff(offsets))

    def at(i):  # how the id at flat index i is named
        return run.where(entry_of[i], i - offsets[entry_of[i]])

    corpus_codes = pc.index_in(ids, value_set=truth.corpus_ids).fill_null(-1)  # -1: not in the corpus
    codes = corpus_codes.to_numpy()
    report(np.flatnonzero(codes < 0), lambda i: f"{at(i)}: {ids[i].as_py()!r} is not in the corpus")

    def pair_keys():  # an int64 per ranked id, equal for an id listed twice in an entry, unique if not in the corpus
        keys = entry_of.astype(np.int64)
        keys *= len(truth.corpus_ids)
        keys += codes
        keys[codes < 0] = -1 - np.flatnonzero(codes < 0)
        return keys

    keys = pair_keys()
    keys.sort()  # in place: a large run's keys are held once
    repeated = np.zeros(0, dtype=np.int64)
    if (keys[1:] == keys[:-1]).any():  # then find where, for the report
        keys = pair_keys()
        order = np.argsort(keys, kind="stable")  # each entry's ids by code, equal codes in ranking order
        repeated = np.sort(order[1:][keys[order[1:]] == keys[order[:-1]]])
    del keys

    def first_position(i):
        start = offsets[entry_of[i]]
        return int(np.argmax(codes[start:i] == codes[i])) + 1

    report(repeated, lambda i: f"{at(i)}: {ids[i].as_py()!r} already at position {first_position(i)}")
    if run.scores is not None:
        scores = run.scores.values
        not_finite = pc.and_(scores.is_valid(), pc.invert(pc.is_finite(scores))).to_numpy(zero_copy_only=False)
        report(np.flatnonzero(not_finite), lambda i: f"{at(i)}: score {scores[i].as_py()!r} is not a finite number")
    missing = pc.filter(truth.query_ids, pc.invert(pc.is_in(truth.query_ids, value_set=run.query_ids))).to_pylist()
    found.append((len(missing), [f"query {qid!r}: missing from the run" for qid in missing[:MAX_LISTED]]))
    raise_problems(run.path, [m for _, messages in found for m in messages], total=sum(n for n, _ in found))
    # ids as codes into the corpus ids: a quarter of the strings' memory, and the metric's index needs no encoding
    coded = pa.ListArray.from_arrays(run.rankings.offsets, pa.DictionaryArray.from_arrays(corpus_codes, truth.corpus_ids))
    return coded.take(pc.index_in(truth.query_ids, value_set=run.query_ids))


def _keep_entries(run: Run, keep) -> None:
    take = pa.array(keep, pa.int64())
    run.query_ids, run.rankings = run.query_ids.take(take), run.rankings.take(take)
    run.scores = run.scores.take(take) if run.scores is not None else None
    run.lines = run.lines.take(take) if run.lines is not None else None


def check_pool(run: Run, baseline: Run) -> None:
    """For reranking: each query's candidates are exactly the baseline's pool for that query."""
    pools = dict(zip(baseline.query_ids.to_pylist(), baseline.rankings.to_pylist()))
    problems = []
    for entry, (qid, ranked) in enumerate(zip(run.query_ids.to_pylist(), run.rankings.to_pylist())):
        pool, ranked = set(pools.get(qid, ())), set(ranked)
        extra, missing = sorted(ranked - pool), sorted(pool - ranked)
        if extra:
            problems.append(f"{run.where(entry)}: {len(extra)} id(s) not in the baseline pool, e.g. {extra[0]!r}")
        if missing:
            problems.append(f"{run.where(entry)}: {len(missing)} id(s) of the baseline pool missing, e.g. {missing[0]!r}")
    raise_problems(run.path, problems, what=f"is not a reranking of {baseline.path}")


def raise_problems(path: str, problems: list, what: str = "does not fit the benchmark", total: int = 0) -> None:
    if problems:
        total = max(total, len(problems))
        listed = "\n  ".join(problems[:MAX_LISTED])
        more = f"\n  ... and {total - min(len(problems), MAX_LISTED)} more" if total > MAX_LISTED else ""
        raise RunError(f"{path} {what}: {total} problem(s):\n  {listed}{more}")


# ---------------------------------------------------------------------------------------------------------------
# Writing


def write_run(path, query_ids, rankings, scores=None) -> Path:
    """Write the official JSON run (one entry per query, ``did`` and ``score``), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    scores = scores if scores is not None else [[None] * len(ranking) for ranking in rankings]
    entries = [
        {"qid": qid, "ranked": [{"did": did, "score": score} for did, score in zip(ranking, row_scores)]}
        for qid, ranking, row_scores in zip(query_ids, rankings, scores)
    ]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path
