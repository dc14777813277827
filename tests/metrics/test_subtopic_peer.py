"""SC-R-L1@k against an independent peer: ndeval's subtopic recall (ir_measures ``StRecall``, via pyndeval).

SC-R-L1@k is subtopic recall where a query's subtopics are the leaf categories of its L1 products and an L1
product covers its own category. ndeval has no value for a query without subtopics; MIPR scores it 0.
"""

import pytest
from _metrics_helpers import MIPR
from _metrics_helpers import random_mipr

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pyndeval")

CUTOFFS = (1, 3, 10, 20)  # ndeval computes cutoffs up to 20


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_sc_r_l1_matches_ndeval_subtopic_recall(seed):
    query_ids, judged, grades, categories, rankings = random_mipr(seed)
    qrels = [
        ir_measures.Qrel(qid, item, 1, category)
        for qid, items, labels, cats in zip(query_ids, judged, grades, categories)
        for item, label, category in zip(items, labels, cats)
        if label == "L1"
    ]
    run = [
        ir_measures.ScoredDoc(qid, item, float(len(ranking) - rank))
        for qid, ranking in zip(query_ids, rankings)
        for rank, item in enumerate(ranking)
    ]
    peer = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc([ir_measures.StRecall @ k for k in CUTOFFS], qrels, run)
    }
    ours = MIPR.evaluate_run(
        MIPR.Qrels(judged, grades, categories, query_ids=query_ids), rankings, k=CUTOFFS, per_query=True
    )

    with_l1 = [row for row, labels in enumerate(grades) if "L1" in labels]
    assert 0 < len(with_l1) < len(query_ids)
    for k in CUTOFFS:
        values = ours["per_query"][f"SC-R-L1@{k}"]
        for row in with_l1:
            assert values[row] == pytest.approx(peer[query_ids[row], f"StRecall@{k}"], abs=1e-12)
        assert all(values[row] == 0 for row in range(len(query_ids)) if row not in with_l1)
