"""Whether a repeated run is the recorded one (``records.differences.same_run``), both read as scoring reads runs."""

import json
from pathlib import Path

from mmrhub.records.differences import same_run
from mmrhub.scoring.runs.reading import read_run_bytes

RECORDED = Path("runs/first.json")


def official(rankings: dict) -> bytes:
    entries = [
        {"qid": qid, "ranked": [{"did": did, "score": score} for did, score in ranked]}
        for qid, ranked in rankings.items()
    ]
    return json.dumps(entries).encode()


RUN = {"q1": [("d1", 0.9), ("d2", 0.5)], "q2": [("d3", 0.7), ("d4", 0.2)]}


def test_identical_bytes_and_a_missing_recorded_run_are_said_so():
    data = official(RUN)
    assert (
        same_run(data, data, RECORDED, read_run_bytes)
        == "The repeated run is identical to the recorded one, byte for byte."
    )
    assert (
        same_run(None, data, RECORDED, read_run_bytes) == f"The recorded run {RECORDED} is not there to compare with."
    )


def test_the_queries_ranked_differently_and_the_largest_score_change_are_counted():
    repeated = {"q1": [("d2", 0.95), ("d1", 0.9)], "q2": [("d3", 0.7005), ("d4", 0.2)]}
    said = same_run(official(RUN), official(repeated), RECORDED, read_run_bytes)
    # q1 reordered (its items moved: no score compared); q2 kept its order, d3's score moved by 5e-4
    assert said == (
        "The repeated run differs from the recorded one: 1 of 2 queries ranked differently, "
        "scores of the same items apart by up to 0.0005."
    )


def test_a_recorded_run_in_another_format_is_compared_by_its_rankings():
    trec = "".join(
        f"{qid} Q0 {did} {rank} {score} tag\n"
        for qid, ranked in RUN.items()
        for rank, (did, score) in enumerate(ranked, 1)
    ).encode()
    said = same_run(trec, official(RUN), RECORDED, read_run_bytes)
    assert said.endswith("0 of 2 queries ranked differently, scores of the same items apart by up to 0.")


def test_a_recorded_file_that_is_no_run_is_said_so():
    said = same_run(b"qid,score\n1,2\n3", official(RUN), RECORDED, read_run_bytes)
    assert said == f"The repeated run differs from {RECORDED}, which is not a run as retrieve and rerank write them."
