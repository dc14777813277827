"""Write runs in the official JSON format."""

import json
import os
from pathlib import Path



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
