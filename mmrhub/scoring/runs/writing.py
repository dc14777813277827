"""Write runs in the official JSON format."""

import json
from pathlib import Path

from mmrhub.writing import write_text


def write_run(path, query_ids, rankings, scores=None) -> Path:
    """Write the official JSON run (one entry per query, ``did`` and ``score``), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    scores = scores if scores is not None else [[None] * len(ranking) for ranking in rankings]
    entries = [
        {"qid": qid, "ranked": [{"did": did, "score": score} for did, score in zip(ranking, row_scores)]}
        for qid, ranking, row_scores in zip(query_ids, rankings, scores)
    ]
    return write_text(path, json.dumps(entries, ensure_ascii=False))
