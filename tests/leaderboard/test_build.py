"""``mmrhub leaderboard`` and ``leaderboard add`` on the bundled samples: the board folder holds the judgments the
entries were scored against (byte for byte), one result file per run whose table, per-group means and per-query
values are ``mmrhub evaluate``'s (``--json``), the run's sha256 and what its record says, the Space's files, and
nothing it should not (no rankings unless asked, nothing written where a folder exists)."""

import hashlib
import json
import re

import pytest
from _cli import run_cli
from _leaderboard_helpers import SAMPLE_RUNS
from _leaderboard_helpers import build_board
from _leaderboard_helpers import mipr_runs
from _leaderboard_helpers import result_files
from _leaderboard_helpers import swapped_run
from _paths import M2KR_RUN
from _paths import M2KR_SAMPLE
from _paths import MIPR_EMBEDDING
from _paths import MIPR_RERANKED
from _paths import MIPR_SAMPLE
from _paths import ROOT

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.leaderboard.board import read_board
from mmrhub.leaderboard.results import file_name


def evaluate_json(capsys, tmp_path, benchmark, runs, *options) -> dict:
    """{row name: evaluate's --json entry} with the per-group means."""
    out = tmp_path / f"{benchmark}-evaluate.json"
    flag = BENCHMARKS[benchmark].breakdown.flag
    code, _, err = run_cli(capsys, "evaluate", benchmark, *runs, flag, "--json", out, *options)
    assert code == 0, err
    return {run["name"]: run for run in json.loads(out.read_text())["runs"]}


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_each_entry_holds_what_evaluate_gives(capsys, tmp_path, benchmark):
    runs = SAMPLE_RUNS[benchmark]
    board = build_board(capsys, tmp_path / "board", benchmark, runs)
    expected = evaluate_json(capsys, tmp_path, benchmark, runs)
    results = result_files(board)
    assert sorted(results) == sorted(expected)
    key = BENCHMARKS[benchmark].breakdown.key
    for name, data in results.items():
        wanted = expected[name]
        assert data["table"] == wanted["aggregate"]
        assert data["breakdown"] == wanted[key]
        query_ids = data["per_query"]["query_id"]
        assert {qid: {m: data["per_query"][m][i] for m in data["per_query"] if m != "query_id"}
                for i, qid in enumerate(query_ids)} == wanted["per_query"]  # fmt: skip
        run = next(path for path in runs if path.stem == name)
        assert data["run"] == {
            "file": run.name,
            "format": "json",
            "sha256": hashlib.sha256(run.read_bytes()).hexdigest(),
            "queries": len(json.loads(run.read_text())),
        }
        assert data["record"] is None and "rankings" not in data
        assert (board / "results" / file_name(name)).is_file()


def test_the_board_holds_its_judgments_and_settings(capsys, tmp_path):
    board = build_board(capsys, tmp_path / "board", "m2kr", [M2KR_RUN], "--k", "1,5", "--variants", "recall,hit")
    settings = read_board(board)
    tables = sorted(path.relative_to(M2KR_SAMPLE).as_posix() for path in BENCHMARKS["m2kr"].judgment_files(M2KR_SAMPLE))
    assert sorted(settings.judgments["files"]) == tables
    for name, digest in settings.judgments["files"].items():
        copied = (board / "judgments" / name).read_bytes()
        assert copied == (M2KR_SAMPLE / name).read_bytes() and hashlib.sha256(copied).hexdigest() == digest
    assert settings.judgments["sample"] is True and settings.judgments["queries"] == 30
    assert settings.judgments["source"] == "the bundled M2KR sample of mmrhub 0.1.0"
    assert settings.measure_options == {"k": [1, 5], "variants": ["recall", "hit"]}
    assert (settings.permutations, settings.seed, settings.correction) == (10000, 0, "holm")
    table = result_files(board)["simulated_top5"]["table"]
    assert list(table) == ["Recall@1", "Recall@5", "Recall-mean", "Hit@1", "Hit@5", "Hit-mean", "num_queries"]


def test_the_space_s_files(capsys, tmp_path):
    board = build_board(capsys, tmp_path / "board", "mipr", SAMPLE_RUNS["mipr"], "--max-upload-mb", "3")
    card = (board / "README.md").read_text()
    metric_card = (ROOT / "metrics" / "mipr" / "README.md").read_text()
    sdk = re.search(r"^sdk_version: (\S+)$", metric_card, re.M).group(1)
    header = card.split("---")[1]
    assert f"\nsdk: gradio\nsdk_version: {sdk}\napp_file: app.py\n" in header
    assert "\nhf_oauth: true\nhf_oauth_scopes:\n- write-discussions\n" in header
    assert "sample, not the benchmark" in card
    assert (board / "app.py").read_text() == (ROOT / "mmrhub" / "leaderboard_app.py").read_text()
    requirements = (board / "requirements.txt").read_text().split()
    assert "gradio" not in " ".join(requirements) and {"numpy", "pyarrow>=15", "xxhash"} <= set(requirements)
    # the scoring code, copied as it is in the package
    for module in ("mmrhub/scoring/score.py", "mmrhub/metrics/mipr/mipr_measures.py", "mipr_format.py",
                   "mmrhub/leaderboard/page.py", "mmrhub/scoring/runs/kaggle.py"):  # fmt: skip
        source = ROOT / module.replace("mmrhub/metrics", "metrics")
        assert (board / module).read_bytes() == source.read_bytes(), module
    assert not (board / "mmrhub" / "commands").exists() and not (board / "mmrhub" / "retrieve" / "pipeline.py").exists()
    assert not list(board.rglob("__pycache__")) and not (board / "mmrhub" / "data" / "mipr").exists()
    assert read_board(board).max_upload_bytes == 3 << 20


def test_add_scores_as_the_board_scores_and_refuses_a_name_it_has(capsys, tmp_path):
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING], "--k", "5")
    third = swapped_run(MIPR_RERANKED, tmp_path / "third.json")
    code, out, err = run_cli(capsys, "leaderboard", "add", board, MIPR_RERANKED, third, "--name", "R", "--name", "T")
    assert code == 0, err
    assert out.splitlines() == [f"wrote {board / 'results' / file_name(name)}" for name in ("R", "T")]
    results = result_files(board)
    assert sorted(results) == ["R", "T", "simulated_embedding_top50"]
    assert "nDCG@5" in results["T"]["table"] and "nDCG@10" not in results["T"]["table"]  # the board's --k
    before = sorted(p.name for p in (board / "results").iterdir())
    code, _, err = run_cli(capsys, "leaderboard", "add", board, third, "--name", "T")
    assert code == 1 and "an entry named 'T' is on the board" in err and "give the run another --name" in err
    code, _, err = run_cli(capsys, "leaderboard", "add", board, M2KR_RUN)
    assert code == 1 and "is a query of MIPR" in err
    assert sorted(p.name for p in (board / "results").iterdir()) == before


def test_add_refuses_a_board_whose_judgments_changed(capsys, tmp_path):
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING])
    table = board / "judgments" / "mipr_annotation.jsonl"
    table.write_text(table.read_text().replace('"L1"', '"L2"', 1))
    code, _, err = run_cli(capsys, "leaderboard", "add", board, MIPR_RERANKED)
    assert code == 1 and "mipr_annotation.jsonl is not the table the board's entries were scored against" in err


def test_add_refuses_a_board_another_version_built(capsys, tmp_path):
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING])
    settings = json.loads((board / "board.json").read_text())
    (board / "board.json").write_text(json.dumps({**settings, "mmrhub": "0.0.9"}))
    code, _, err = run_cli(capsys, "leaderboard", "add", board, MIPR_RERANKED)
    assert code == 1 and "was built by mmrhub 0.0.9, and this is mmrhub 0.1.0" in err
    assert len(list((board / "results").iterdir())) == 1


def test_an_existing_folder_and_standard_input_are_refused(capsys, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    code, _, err = run_cli(capsys, "leaderboard", "mipr", MIPR_EMBEDDING, "-o", tmp_path / "taken")
    assert code == 1 and "already exists: add entries to a board with `mmrhub leaderboard add" in err
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]
    code, _, err = run_cli(capsys, "leaderboard", "mipr", "-", "-o", tmp_path / "new")
    assert code == 1 and "standard input) cannot be an entry" in err and not (tmp_path / "new").exists()
    code, _, err = run_cli(capsys, "leaderboard", "add", tmp_path / "taken", MIPR_EMBEDDING)
    assert code == 1 and "is not a board folder" in err


def test_with_rankings_keeps_each_run_s_lists(capsys, tmp_path):
    runs = mipr_runs(tmp_path)[:2]
    board = build_board(capsys, tmp_path / "board", "mipr", runs, "--with-rankings")
    data = result_files(board)["simulated_embedding_top50"]
    entries = json.loads(MIPR_EMBEDDING.read_text())
    assert data["rankings"]["query_id"] == [entry["qid"] for entry in entries]
    assert data["rankings"]["ranked"] == [[item["did"] for item in entry["ranked"]] for entry in entries]


def test_the_sample_says_so_and_a_data_folder_names_itself(capsys, tmp_path):
    data = tmp_path / "mipr-data"
    data.mkdir()
    for name in ("mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"):
        (data / name).write_bytes((MIPR_SAMPLE / name).read_bytes())
    board = build_board(capsys, tmp_path / "board", "mipr", [MIPR_EMBEDDING], "--data-dir", data)
    judgments = read_board(board).judgments
    assert judgments["sample"] is False and judgments["source"] == "the MIPR data folder mipr-data"
    board = build_board(capsys, tmp_path / "b2", "mipr", [MIPR_EMBEDDING], "--source", "MIPR release, commit abc")
    assert read_board(board).judgments["source"] == "MIPR release, commit abc"
