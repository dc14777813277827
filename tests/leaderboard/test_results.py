"""A result file may come from anyone (a pull request to the Space): the board reads each one checked against its own
judgments, field by field, and leaves out one that does not fit, saying why in one line naming the file and the
field; the others stay on the board. Two entries of one name are told apart."""

import json

import pytest
from _leaderboard_helpers import SAMPLE_RUNS
from _paths import MIPR_EMBEDDING

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.leaderboard import results
from mmrhub.leaderboard.live import LiveBoard

MIPR = BENCHMARKS["mipr"]


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results") / "board"
    assert main(["leaderboard", "mipr", *map(str, SAMPLE_RUNS["mipr"]), "-o", str(folder)]) == 0
    return folder


@pytest.fixture
def entry(board):
    """The embedding run's result file's content, to tamper with."""
    path = board / "results" / results.file_name("simulated_embedding_top50")
    return json.loads(path.read_text())


def check(board, data):
    live = LiveBoard(MIPR, board)
    return results.check_result(data, "results/x.json", live.board, MIPR, live.expected)


def tampered(data, path, value):
    *parents, last = path
    target = data
    for key in parents:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    "path, value, said",
    [
        (("format",), "other/1", "results/x.json: format: not a board entry"),
        (("benchmark",), "m2kr", "results/x.json: benchmark: an entry of 'm2kr', not of mipr."),
        (("scored_by",), "mmrhub 0.0.9", "scored_by: 'mmrhub 0.0.9', not this board's mmrhub 0.1.0."),
        (("judgments", "mipr_annotation.jsonl"), "0" * 64, "judgments: scored against other judgment tables"),
        (("options", "measure_options", "k"), [5], "options: scored with other options than this board's"),
        (("name",), "a\nb", "name: the entry's name 'a\\nb' is not a name"),
        (("table", "nDCG@10"), 0.9, "table.nDCG@10: 0.9 is not the mean of its per-query values"),
        (("table", "nDCG@10"), 1.5, "table.nDCG@10: 1.5 is not a score in [0, 1]"),
        (("table", "nDCG@10"), "0.5", "table.nDCG@10: '0.5' is not a score in [0, 1]"),
        (("table", "extra"), 0.5, "table: expected exactly the measures and counts nDCG@10,"),
        (("table", "num_queries"), 28, "table.num_queries: 28, but this board's judgments give 27."),
        (("per_query", "nDCG@10", 3), 0.0, "table.nDCG@10: 0.5988756482930223 is not the mean of its per-query"),
        (("per_query", "nDCG@10", 3), None, "per_query.nDCG@10: query '4': None is not its value."),
        (("per_query", "nDCG@10"), [0.5], "per_query.nDCG@10: expected a list of 27 values."),
        (("per_query", "query_id", 0), "999", "per_query.query_id: not this board's judged queries, in its order."),
        (("per_query", "nDCG@10", 0), float("nan"), "per_query.nDCG@10: query '1': nan is not its value."),
        (("breakdown", "3C数码配件", "nDCG@10"), 0.0, "breakdown: not the per-top-level category means"),
        (("run",), "run.json", "run: expected the run file's name and format."),
        (("notes",), ["x"] * 21, "notes: expected at most 20 lines of text."),
        (("record",), {"model": ["a"]}, "record: expected an object of texts, flags and a versions object"),
        (("record",), {"model": "x" * 501}, "record: expected an object of texts"),
    ],
)
def test_a_tampered_field_is_refused_by_name(board, entry, path, value, said):
    with pytest.raises(ValueError) as raised:
        check(board, tampered(entry, path, value))
    assert said in str(raised.value) and "\n" not in str(raised.value)


def test_a_value_where_the_judgments_leave_the_query_out_is_refused(board, entry):
    column = entry["per_query"]["SC-R-L1@10*"]
    left_out = column.index(None)  # a query with fewer than two L1 categories
    column[left_out] = 0.5
    qid = entry["per_query"]["query_id"][left_out]
    with pytest.raises(ValueError, match=f"per_query.SC-R-L1@10\\*: query '{qid}': 0.5 is not its value."):
        check(board, entry)


def test_the_untouched_entry_and_a_record_summary_pass(board, entry):
    assert check(board, entry) is entry
    entry["record"] = {"model": "org/m", "rerun": True, "versions": {"numpy": "2.0", "torch": None}}
    assert check(board, entry) is entry


def test_a_bad_file_is_left_out_and_said_the_others_stay(board, entry, tmp_path):
    import shutil

    copy = shutil.copytree(board, tmp_path / "board")
    entry["table"]["nDCG@10"] = 0.99
    (copy / "results" / "aaa-bad.json").write_text(json.dumps(entry))
    (copy / "results" / "bbb-damaged.json").write_text('{"format": ')
    second = json.loads((copy / "results" / results.file_name("simulated_reranker_top50")).read_text())
    (copy / "results" / "zzz-same-name.json").write_text(json.dumps(second))
    live = LiveBoard(MIPR, copy)
    assert [entry.name for entry in live.standings.entries] == [
        "simulated_reranker_top50",
        "simulated_reranker_top50 (2)",
        "simulated_embedding_top50",
    ]
    assert live.standings.entries[1].notes[-1] == (
        "two entries are named 'simulated_reranker_top50': results/zzz-same-name.json is this one."
    )
    assert len(live.problems) == 2
    assert live.problems[0].startswith("results/aaa-bad.json: table.nDCG@10: 0.99 is not the mean")
    assert live.problems[1].startswith(f"{copy / 'results' / 'bbb-damaged.json'}: line 1, column 12")


def test_a_result_file_too_large_is_refused_before_it_is_parsed(board, tmp_path, monkeypatch):
    import shutil

    copy = shutil.copytree(board, tmp_path / "board")
    monkeypatch.setattr(results, "MAX_RESULT", 1000)
    live = LiveBoard(MIPR, copy)
    assert live.standings.entries == () and len(live.problems) == 2
    assert all("larger than 1,000 bytes" in problem for problem in live.problems)


def test_names_and_file_names():
    assert results.check_name("  My run ") == "My run"
    for bad in ("", "  ", "a\tb", "x" * 101, "a\u2028b"):
        with pytest.raises(ValueError):
            results.check_name(bad)
    assert results.file_name("../../etc/passwd") == f"etc-passwd-{results.file_name('../../etc/passwd')[-13:-5]}.json"
    assert results.file_name("Qwen3-VL 8B") != results.file_name("qwen3-vl-8b")  # the hash of the whole name
    assert results.file_name("模型").startswith("entry-") and "/" not in results.file_name("a/b")
    assert MIPR_EMBEDDING.stem == "simulated_embedding_top50"
