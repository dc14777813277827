"""Run files (official JSON, TREC, M2KR Kaggle CSV): reading, and validation against a benchmark."""

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

MAX_LISTED = 20


class RunError(ValueError):
    """A run file that cannot be read or does not fit the benchmark; the message names every problem found."""


@dataclass
class Run:
    path: str
    format: str
    query_ids: List[str]
    rankings: List[List[str]]
    scores: List[List[Optional[float]]]
    # Where each query's entries come from: "entry N" (JSON) or per-entry "line N" (text formats).
    origins: List[str] = field(default_factory=list)
    lines: Optional[List[List[int]]] = None

    @property
    def name(self) -> str:
        return Path(self.path).name.split(".")[0]

    def where(self, query: int, position: Optional[int] = None) -> str:
        """'query '7' position 3 (line 12)': how a violation is named."""
        text = f"query {self.query_ids[query]!r}"
        if position is None:
            return f"{text} ({self.origins[query]})"
        text += f" position {position + 1}"
        if self.lines is not None:
            return f"{text} (line {self.lines[query][position]})"
        return f"{text} ({self.origins[query]})"


def read_run(path) -> Run:
    """Read a run, detecting its format from the content: '[' starts JSON, a ``question_id,`` header is CSV."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as err:
        raise RunError(f"{path}: cannot read the run file ({err})") from None
    stripped = text.lstrip()
    if not stripped:
        raise RunError(f"{path}: the run file is empty")
    if stripped.startswith("[") or stripped.startswith("{"):
        return parse_json_run(path, text)
    if stripped.split("\n", 1)[0].replace(" ", "").lower().startswith("question_id,"):
        return parse_kaggle_csv(path, text)
    return parse_trec_run(path, text)


def parse_json_run(path: str, text: str) -> Run:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RunError(f"{path}: line {err.lineno}: not valid JSON ({err.msg})") from None
    if not isinstance(data, list):
        raise RunError(f'{path}: expected a JSON array of {{"qid", "ranked"}} objects, got {type(data).__name__}')
    run = Run(path, "json", [], [], [])
    for entry_no, entry in enumerate(data, 1):
        where = f"{path}: entry {entry_no}"
        if not isinstance(entry, dict) or "qid" not in entry or "ranked" not in entry:
            raise RunError(f'{where}: expected an object with "qid" and "ranked"')
        if not isinstance(entry["qid"], str):
            raise RunError(f'{where}: "qid" must be a string, got {entry["qid"]!r}')
        if not isinstance(entry["ranked"], list):
            raise RunError(f'{where} (query {entry["qid"]!r}): "ranked" must be a list')
        ids, scores = [], []
        for position, item in enumerate(entry["ranked"], 1):
            if not isinstance(item, dict) or not isinstance(item.get("did"), str):
                raise RunError(
                    f'{where} (query {entry["qid"]!r}) position {position}: expected {{"did": "<id>", "score": <number>}}'
                )
            ids.append(item["did"])
            scores.append(item.get("score"))
        run.query_ids.append(entry["qid"])
        run.rankings.append(ids)
        run.scores.append(scores)
        run.origins.append(f"entry {entry_no}")
    return run


def parse_trec_run(path: str, text: str) -> Run:
    """``qid Q0 docid rank score tag`` lines; each query's entries are ordered by their rank column."""
    by_query = {}
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise RunError(f"{path}: line {line_no}: expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}")
        qid, _, did, rank, score, _ = fields
        try:
            rank = int(rank)
        except ValueError:
            raise RunError(f"{path}: line {line_no}: rank {rank!r} is not an integer") from None
        try:
            score = float(score)
        except ValueError:
            raise RunError(f"{path}: line {line_no}: score {score!r} is not a number") from None
        by_query.setdefault(qid, []).append((rank, line_no, did, score))
    run = Run(path, "trec", [], [], [], lines=[])
    for qid, entries in by_query.items():
        entries.sort(key=lambda entry: entry[0])
        repeated = [a for a, b in zip(entries, entries[1:]) if a[0] == b[0]]
        if repeated:
            raise RunError(f"{path}: line {repeated[0][1]}: query {qid!r} has rank {repeated[0][0]} twice")
        run.query_ids.append(qid)
        run.rankings.append([entry[2] for entry in entries])
        run.scores.append([entry[3] for entry in entries])
        run.lines.append([entry[1] for entry in entries])
        run.origins.append(f"line {entries[0][1]}")
    return run


def parse_kaggle_csv(path: str, text: str) -> Run:
    """M2KR Kaggle submission: ``question_id,passage_id`` with a JSON list of passage ids per row."""
    rows = csv.reader(text.splitlines())
    header = [name.strip() for name in next(rows)]
    if header != ["question_id", "passage_id"]:
        raise RunError(f"{path}: line 1: expected the header 'question_id,passage_id', got {','.join(header)!r}")
    run = Run(path, "kaggle", [], [], [], lines=[])
    for line_no, row in enumerate(rows, 2):
        if not row:
            continue
        if len(row) != 2:
            raise RunError(f"{path}: line {line_no}: expected 2 columns, got {len(row)}")
        try:
            ids = json.loads(row[1])
        except json.JSONDecodeError:
            ids = None
        if not isinstance(ids, list) or not all(isinstance(i, (str, int)) for i in ids):
            raise RunError(f"{path}: line {line_no}: passage_id must be a JSON list of ids, got {row[1]!r}")
        run.query_ids.append(row[0].strip())
        run.rankings.append([str(i) for i in ids])
        run.scores.append([None] * len(ids))
        run.lines.append([line_no] * len(ids))
        run.origins.append(f"line {line_no}")
    return run


def restore_stripped_ids(run: Run, corpus_ids) -> Run:
    """Kaggle scoring stripped the 'A' of numeric passage ids (A27558 -> 27558): put it back where the corpus has it."""
    corpus_ids = set(corpus_ids)
    for ranking in run.rankings:
        for position, did in enumerate(ranking):
            if did.isdigit() and did not in corpus_ids and "A" + did in corpus_ids:
                ranking[position] = "A" + did
    return run


def validate(run: Run, query_ids, corpus_ids) -> None:
    """Every benchmark query exactly once, every id in the corpus and once per ranking, scores finite numbers."""
    problems = []
    wanted = set(query_ids)
    corpus_ids = corpus_ids if isinstance(corpus_ids, (set, frozenset)) else set(corpus_ids)
    first_seen = {}
    for query, qid in enumerate(run.query_ids):
        if qid not in wanted:
            problems.append(f"{run.where(query)}: not a query of the benchmark")
        elif qid in first_seen:
            problems.append(f"{run.where(query)}: appears again (first at {run.origins[first_seen[qid]]})")
        else:
            first_seen[qid] = query
        seen = {}
        for position, did in enumerate(run.rankings[query]):
            if did not in corpus_ids:
                problems.append(f"{run.where(query, position)}: {did!r} is not in the corpus")
            if did in seen:
                problems.append(f"{run.where(query, position)}: {did!r} already at position {seen[did] + 1}")
            else:
                seen[did] = position
            score = run.scores[query][position]
            if score is not None and (
                isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)
            ):
                problems.append(f"{run.where(query, position)}: score {score!r} is not a finite number")
    missing = [qid for qid in query_ids if qid not in first_seen]
    problems += [f"query {qid!r}: missing from the run" for qid in missing]
    raise_problems(run.path, problems)


def check_pool(run: Run, baseline: Run) -> None:
    """For reranking: each query's candidates are exactly the baseline's pool for that query."""
    pools = dict(zip(baseline.query_ids, baseline.rankings))
    problems = []
    for query, qid in enumerate(run.query_ids):
        pool = set(pools.get(qid, ()))
        ranked = set(run.rankings[query])
        extra, missing = sorted(ranked - pool), sorted(pool - ranked)
        if extra:
            problems.append(f"{run.where(query)}: {len(extra)} id(s) not in the baseline pool, e.g. {extra[0]!r}")
        if missing:
            problems.append(f"{run.where(query)}: {len(missing)} id(s) of the baseline pool missing, e.g. {missing[0]!r}")
    raise_problems(run.path, problems, what=f"is not a reranking of {baseline.path}")


def raise_problems(path: str, problems: list, what: str = "does not fit the benchmark") -> None:
    if problems:
        listed = "\n  ".join(problems[:MAX_LISTED])
        more = f"\n  ... and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
        raise RunError(f"{path} {what}: {len(problems)} problem(s):\n  {listed}{more}")


def aligned(run: Run, query_ids) -> list:
    """The run's rankings in the order of ``query_ids`` (a validated run has each exactly once)."""
    by_query = dict(zip(run.query_ids, run.rankings))
    return [by_query[qid] for qid in query_ids]
