"""MTEB's saved predictions (``mteb.evaluate(..., prediction_folder=DIR)`` writes ``DIR/<task>_predictions.json``:
``{"mteb_model_meta": {"model_name", "revision"}, subset: {split: {query id: {document id: score}}}}``) turned into a
run in the official format, which ``mmrhub evaluate`` scores with the benchmark's full metrics.

Each query's documents are ordered as trec_eval (and so MTEB's own scoring, through pytrec_eval) orders them: score
descending, compared in single precision, ties by document id descending (``mmrhub.scoring.runs.order``). The run
lists them in that order, with their scores. Nothing here imports mteb.
"""

from dataclasses import dataclass
from dataclasses import field

import numpy as np
import pyarrow as pa

from mmr_inputs import load_json_file
from mmrhub.retrieve.finite import check as check_finite
from mmrhub.scoring.runs.order import single_precision
from mmrhub.scoring.runs.order import trec_eval_sort
from mmrhub.scoring.runs.writing import write_run


@dataclass
class Predictions:
    """One split of a predictions file: the model MTEB names, and each query's scored documents (file order)."""

    path: str
    model_name: str
    model_revision: str
    scored: dict  # query id -> {document id: score}


@dataclass
class Ranking:
    """A run: query ids, each query's ranked document ids and their scores; ``notes`` says what was filled in."""

    query_ids: list
    rankings: list
    scores: list
    notes: list
    unranked: list = field(default_factory=list)  # judged queries MTEB did not rank (an empty judgment list)

    @property
    def depth(self) -> int:
        """The longest ranking."""
        return max(map(len, self.rankings), default=0)


def read_predictions(path, subset: str = "default", split: str = "test") -> Predictions:
    """The ``subset`` / ``split`` predictions of a file MTEB saved; a ValueError names what is missing."""
    path = str(path)
    saved = load_json_file(path)
    if not isinstance(saved, dict) or not isinstance(saved.get(subset), dict) or split not in saved[subset]:
        raise ValueError(f"{path}: holds no predictions for subset {subset!r}, split {split!r} (not saved by MTEB?).")
    meta = saved.get("mteb_model_meta") or {}
    return Predictions(path, meta.get("model_name"), meta.get("revision"), saved[subset][split])


def check_scores(predictions: Predictions, model: str) -> None:
    """Every score MTEB saved is a finite number (``finite.check``), or one line names the model, the query and the
    document, before any run is written."""
    pairs = [(qid, did) for qid, documents in predictions.scored.items() for did in documents]
    values = [
        score if isinstance(score, (int, float)) and not isinstance(score, bool) else float("nan")
        for documents in predictions.scored.values()
        for score in documents.values()
    ]
    check_finite(
        np.array(values, dtype=np.float64),
        model,
        lambda row: f"query {pairs[row][0]!r} and document {pairs[row][1]!r} (MTEB's {predictions.path})",
    )


def ranked(scored: dict) -> Ranking:
    """Each query's documents in trec_eval's order (score descending in single precision, then id descending)."""
    query_ids = list(scored)
    counts = np.array([len(scored[qid]) for qid in query_ids], dtype=np.int64)
    dids = pa.array([str(did) for qid in query_ids for did in scored[qid]], pa.string())
    values = pa.array([float(score) for qid in query_ids for score in scored[qid].values()], pa.float64())
    order = trec_eval_sort(np.repeat(np.arange(len(query_ids)), counts), single_precision(values), dids)
    dids, values = dids.take(order).to_pylist(), values.take(order).to_pylist()
    offsets = np.concatenate([[0], np.cumsum(counts)])
    rankings = [dids[start:end] for start, end in zip(offsets[:-1], offsets[1:])]
    scores = [values[start:end] for start, end in zip(offsets[:-1], offsets[1:])]
    return Ranking([str(qid) for qid in query_ids], rankings, scores, [])


def aligned(ranking: Ranking, truth, source: str = "the export", sample: str = "") -> Ranking:
    """``ranking`` in the order of the judged queries of ``truth`` (``mmrhub.scoring.judgments.Truth``), checked
    to be of the same data. MTEB ranks only the queries with a qrels row, so a judged query with an empty judgment
    list is missing from its predictions: it gets an empty ranking, which scores what any ranking would (0), and a
    note. Any other query missing, or one the benchmark does not have, means ``source`` was made from other data;
    ``sample`` names the bundled sample when it was scored for want of a --data-dir (``sample_scored``)."""
    by_query = {qid: (ids, scores) for qid, ids, scores in zip(ranking.query_ids, ranking.rankings, ranking.scores)}
    judged = [str(qid) for qid in truth.query_ids.to_pylist()]
    known = set(judged) | {str(qid) for qid in truth.unjudged_query_ids.to_pylist()}
    unknown = [qid for qid in ranking.query_ids if qid not in known]
    judgments = np.bincount(truth.judgments.pairs.rows, minlength=len(judged))  # judged items per query
    missing = [qid for qid, count in zip(judged, judgments) if qid not in by_query and count]
    if unknown or missing:
        problems = [f"{len(unknown)} of its queries are not the benchmark's (e.g. {unknown[0]!r})"] if unknown else []
        problems += [f"it lacks {len(missing)} judged queries (e.g. {missing[0]!r})"] if missing else []
        if sample:
            raise ValueError(
                f"MTEB's predictions on {source} do not fit {sample} ({'; '.join(problems)}): pass the --data-dir "
                "the export was made from."
            )
        raise ValueError(
            f"MTEB's predictions on {source} do not fit the judgments scored: {'; '.join(problems)}. Was the export "
            "made from other data? Give the --data-dir it was exported from, or leave --export out to export it."
        )
    empty = [qid for qid in judged if qid not in by_query]
    notes = list(ranking.notes)
    if empty:
        notes.append(
            f"{len(empty)} judged queries have an empty judgment list, so no qrels row, and MTEB ranked none of them: "
            "the run lists them with empty rankings (they score 0 with any ranking)."
        )
    rows = [by_query.get(qid, ([], [])) for qid in judged]
    return Ranking(judged, [ids for ids, _ in rows], [scores for _, scores in rows], notes, empty)


def write(path, ranking: Ranking):
    """The run in the official JSON format (``[{"qid", "ranked": [{"did", "score"}]}]``), through
    ``mmrhub.writing``."""
    return write_run(path, ranking.query_ids, ranking.rankings, ranking.scores)
