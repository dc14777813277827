"""Dict runs ``{qid: {did: score}}``, as ranx (``Run.to_dict()``, ``Run.save("run.json")``) and pytrec_eval take
and write them, read by Python's json; each query is ordered as trec_eval orders it."""

import numpy as np
import pyarrow as pa

from mmr_inputs import load_json
from mmrhub.scoring.runs.order import single_precision
from mmrhub.scoring.runs.order import trec_eval_sort
from mmrhub.scoring.runs.run import Run
from mmrhub.scoring.runs.run import RunError


def read_dict(source, bom: int) -> Run:
    """A JSON object of queries, each an object of document scores; each query's documents in trec_eval's order
    (``mmrhub.scoring.runs.order``), since an object's order is not a ranking."""
    run = load_json(source.name, source.read(bom))
    if "qid" in run and "ranked" in run:
        raise RunError(f'{source.name}: one {{"qid", "ranked"}} object; the official format is a JSON array of them')
    query_ids, counts, dids, scores = [], [], [], []
    for number, (qid, documents) in enumerate(run.items(), 1):
        if not isinstance(documents, dict):
            where = f"{source.name}: entry {number} (query {qid!r})"
            raise RunError(f"{where}: expected an object {{did: score}}, got {type(documents).__name__}")
        query_ids.append(qid)
        counts.append(len(documents))
        dids += documents
        scores += documents.values()
    if not set(map(type, scores)) <= {int, float}:  # one pass over the types; the entry is looked for only then
        _name_the_score(source.name, run)
    query = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
    try:
        dids, scores = pa.array(dids, pa.string()), pa.array(scores, pa.float64())
    except pa.ArrowInvalid as err:  # an integer beyond 64 bits
        raise RunError(f"{source.name}: a score is not a number that fits a double ({err})") from None
    sort = pa.array(trec_eval_sort(query, single_precision(scores), dids))
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]), pa.int32())
    rankings = pa.ListArray.from_arrays(offsets, dids.take(sort))
    scores = pa.ListArray.from_arrays(offsets, scores.take(sort))
    return Run(source.name, "dict", pa.array(query_ids, pa.string()), rankings, scores)


def _name_the_score(path: str, run: dict) -> None:
    """Raise the RunError naming the first score that is not a number (None, a string, a boolean, ...)."""
    for number, (qid, documents) in enumerate(run.items(), 1):
        for did, score in documents.items():
            if type(score) not in (int, float):
                where = f"{path}: entry {number} (query {qid!r}) document {did!r}"
                raise RunError(f"{where}: expected a number as its score, got {score!r}")
