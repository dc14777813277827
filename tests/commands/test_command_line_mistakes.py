"""Everyday mistakes and odd run files at the command line: one line naming what is wrong, never a traceback;
what changes the scores is said with counts."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from _cli import run_cli
from _paths import ROOT

MIPR_DIR = ROOT / "data" / "mipr"
EMBEDDING = MIPR_DIR / "baseline" / "simulated_embedding_top50.json"
M2KR_DIR = ROOT / "data" / "m2kr"
M2KR_RUN = M2KR_DIR / "baseline" / "simulated_top5.json"


def one_line_error(capsys, *argv) -> str:
    code, out, err = run_cli(capsys, *argv)
    assert code == 1 and out == "", out
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_missing_data_dir(capsys, tmp_path):
    err = one_line_error(capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", tmp_path / "nowhere")
    assert f"data folder {tmp_path / 'nowhere'} does not exist or is not a folder: check --data-dir." in err


def test_data_file_that_is_a_folder(capsys, tmp_path):
    data_dir = shutil.copytree(MIPR_DIR, tmp_path / "mipr")
    (data_dir / "mipr_annotation.jsonl").unlink()
    (data_dir / "mipr_annotation.jsonl").mkdir()
    err = one_line_error(capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", data_dir)
    assert f"{data_dir / 'mipr_annotation.jsonl'} is missing or not a file" in err


def test_scoring_needs_no_image_or_archive(capsys, tmp_path):
    mipr_tables = tmp_path / "mipr"
    mipr_tables.mkdir()
    for name in ("mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"):
        shutil.copy(MIPR_DIR / name, mipr_tables)
    code, out, err = run_cli(capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", mipr_tables)
    assert code == 0, err
    m2kr_tables = shutil.copytree(M2KR_DIR, tmp_path / "m2kr", ignore=shutil.ignore_patterns("*.zip*", "baseline"))
    code, out, err = run_cli(capsys, "evaluate", "m2kr", M2KR_RUN, "--data-dir", m2kr_tables)
    assert code == 0, err
    assert "| simulated_top5 |" in out


def test_invalid_judgments_get_the_builders_error(capsys, tmp_path):
    data_dir = shutil.copytree(MIPR_DIR, tmp_path / "mipr")
    path = data_dir / "mipr_annotation.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[3]["items"][1]["final_grade"] = "L9"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    err = one_line_error(capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", data_dir)
    assert f'{path} idx "{rows[3]["idx"]}" items[2]: unknown final_grade "L9"' in err


@pytest.mark.parametrize("target", ["missing/scores.json", "."])
def test_json_output_into_a_missing_folder_or_onto_a_folder(capsys, tmp_path, target):
    err = one_line_error(capsys, "evaluate", "mipr", EMBEDDING, "--json", tmp_path / target)
    assert "--json" in err and str(tmp_path) in err


def test_failing_info_is_one_line(capsys, tmp_path):
    err = one_line_error(capsys, "info", "mipr", "--data-dir", tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in err


def test_debug_shows_the_traceback(capsys, tmp_path):
    code, _, err = run_cli(capsys, "--debug", "evaluate", "mipr", EMBEDDING, "--data-dir", tmp_path / "nowhere")
    assert code == 1 and "Traceback" in err and "FileNotFoundError" in err


def scores_of(capsys, *argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    return [line for line in out.splitlines() if line.startswith("| ")][1].split("|")[2:]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-8"])
def test_json_run_with_or_without_bom(capsys, tmp_path, encoding):
    run = tmp_path / "run.json"
    run.write_text(EMBEDDING.read_text(encoding="utf-8"), encoding=encoding)
    assert scores_of(capsys, "evaluate", "mipr", run) == scores_of(capsys, "evaluate", "mipr", EMBEDDING)


def kaggle_rows():
    entries = json.loads(M2KR_RUN.read_text())
    return [(entry["qid"], json.dumps([item["did"] for item in entry["ranked"]])) for entry in entries]


def csv_text(rows, header="question_id,passage_id", index=False) -> str:
    lines = [("," if index else "") + header] if header else []
    for number, (qid, ids) in enumerate(rows):
        cells = ([str(number)] if index else []) + [qid, '"' + ids.replace('"', '""') + '"']
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("variant", ["header", "bom", "no header", "pandas index"])
def test_kaggle_csv_variants(capsys, tmp_path, variant):
    text = {
        "header": csv_text(kaggle_rows()),
        "bom": "\ufeff" + csv_text(kaggle_rows()),
        "no header": csv_text(kaggle_rows(), header=""),
        "pandas index": csv_text(kaggle_rows(), index=True),
    }[variant]
    run = tmp_path / "submission.csv"
    run.write_text(text, encoding="utf-8")
    assert scores_of(capsys, "evaluate", "m2kr", run) == scores_of(capsys, "evaluate", "m2kr", M2KR_RUN)


@pytest.mark.parametrize("variant", ["header", "no header", "pandas index", "blank line", "numeric ids"])
def test_kaggle_csv_read_by_pyarrow_as_by_the_python_reader(tmp_path, monkeypatch, variant):
    from mmrhub.scoring.runs import kaggle as runs
    from mmrhub.scoring.runs.source import RunSource

    rows = kaggle_rows()
    if variant == "numeric ids":  # JSON numbers: pyarrow's reader refuses them, the Python reader takes them
        rows[0] = (rows[0][0], "[27558, 12]")
    text = csv_text(
        rows, header="" if variant == "no header" else "question_id,passage_id", index=variant == "pandas index"
    )
    path = tmp_path / "submission.csv"
    path.write_text(text.replace("\n", "\n\n", 1) if variant == "blank line" else text, encoding="utf-8")
    slow = runs._read_kaggle_slowly(str(path), path.read_bytes())
    if variant not in ("blank line", "numeric ids"):  # read by pyarrow alone: the Python reader must not be called
        monkeypatch.setattr(runs, "_read_kaggle_slowly", None)
    fast = runs.read_kaggle(RunSource(str(path)), 0)
    assert fast.query_ids.to_pylist() == slow.query_ids.to_pylist() and len(fast.query_ids) == len(rows)
    assert fast.rankings.to_pylist() == slow.rankings.to_pylist() and fast.lines.to_pylist() == slow.lines.to_pylist()
    assert fast.scores is None and slow.scores is None  # the format has no scores


def test_refusal_names_the_format_it_assumed(capsys, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 abc 1 0.5\n", encoding="utf-8")
    err = one_line_error(capsys, "evaluate", "mipr", run)
    assert "line 1: expected 6 fields 'qid Q0 docid rank score tag', got 5 (read as TREC" in err


def test_kaggle_file_with_another_tracks_rows(capsys, tmp_path):
    run = tmp_path / "submission.csv"
    run.write_text(csv_text(kaggle_rows() + [("90002", '["MMDocIR_1"]'), ("90003", '["MMDocIR_2"]')]), encoding="utf-8")
    err = run_cli(capsys, "evaluate", "m2kr", run, "--data-dir", M2KR_DIR)[2]
    assert "query '90002' (line 32): not a query of the benchmark" in err
    code, out, err = run_cli(capsys, "evaluate", "m2kr", run, "--ignore-unknown-queries")
    assert code == 0, err
    assert f"2 entries of {run} are not queries of the benchmark and were set aside" in err
    [row] = [line for line in out.splitlines() if line.startswith("| submission |")]
    assert row.split("|")[2:] == scores_of(capsys, "evaluate", "m2kr", M2KR_RUN)


def rank_column_contradicted(tmp_path):
    """A TREC run whose first three queries have scores rising with the rank column."""
    entries = json.loads(EMBEDDING.read_text())
    lines = []
    for entry in entries[:3]:
        lines += [
            f"{entry['qid']} Q0 {item['did']} {rank} {rank / 100} t" for rank, item in enumerate(entry["ranked"], 1)
        ]
    for entry in entries[3:]:
        lines += [
            f"{entry['qid']} Q0 {item['did']} {rank} {1 - rank / 100} t" for rank, item in enumerate(entry["ranked"], 1)
        ]
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run


def test_trec_scores_that_contradict_the_rank_column_are_noted(capsys, tmp_path):
    run = rank_column_contradicted(tmp_path)
    code, _, err = run_cli(capsys, "evaluate", "mipr", run)
    assert code == 0
    assert (
        f"note: {run} is ordered by score as trec_eval does; its rank column contradicts the scores (a higher score "
        "at a worse rank) in 3 queries; pass --trec-order rank to follow the rank column instead."
    ) in err


def ranx_trec(entries, path):
    """A TREC run as ranx's ``Run.save("run.trec")`` writes it (ranx 0.3): lines numbered by ranx's own sort, score
    descending with ties in the order given, tag ``None``, no final newline."""
    lines = []
    for entry in entries:
        ranked = sorted(entry["ranked"], key=lambda item: -item["score"])  # stable: ties keep their order
        lines += [f"{entry['qid']} Q0 {item['did']} {rank} {item['score']} None" for rank, item in enumerate(ranked, 1)]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.mark.slow  # ranx compiles with numba on import
def test_ranx_trec_writes_what_ranx_writes(tmp_path):
    from ranx import Run

    entries = [{"qid": "7", "ranked": [{"did": d, "score": s} for d, s in (("b", 0.5), ("a", 1.0), ("c", 0.5))]}]
    Run({"7": {"b": 0.5, "a": 1.0, "c": 0.5}}).save(str(tmp_path / "saved.trec"))
    assert ranx_trec(entries, tmp_path / "ours.trec").read_text() == (tmp_path / "saved.trec").read_text()


def test_tied_scores_numbered_in_another_order_are_no_contradiction(capsys, tmp_path):
    entries = json.loads(EMBEDDING.read_text())
    for entry in entries:  # scores in steps of five positions: ties, which ranx numbers in docid ascending order
        entry["ranked"] = sorted(entry["ranked"], key=lambda item: item["did"])
        for position, item in enumerate(entry["ranked"]):
            item["score"] = 1 - position // 5 / 10
    run = ranx_trec(entries, tmp_path / "ranx.trec")
    code, out, err = run_cli(capsys, "evaluate", "mipr", run)
    assert code == 0 and "note:" not in err, err
    # trec_eval breaks the ties by docid descending; the rank column (docid ascending in a tie) is not followed
    by_rank = scores_of(capsys, "evaluate", "mipr", run, "--trec-order", "rank")
    assert scores_of(capsys, "evaluate", "mipr", run) != by_rank
    one = entries[0]["ranked"][0]["score"]
    inverted = run.read_text().replace(f" 2 {one} None", " 2 5.0 None", 1)  # rank 2 scored above rank 1
    run.write_text(inverted)
    code, _, err = run_cli(capsys, "evaluate", "mipr", run)
    assert code == 0 and "contradicts the scores (a higher score at a worse rank) in 1 queries" in err


def test_trec_order_rank_follows_the_rank_column_and_notes_the_scores(capsys, tmp_path):
    run = rank_column_contradicted(tmp_path)
    code, _, err = run_cli(capsys, "evaluate", "mipr", run, "--trec-order", "rank")
    assert code == 0
    assert (
        f"note: {run} is ordered by its rank column (--trec-order rank); its scores contradict it (a higher score at "
        "a worse rank) in 3 queries."
    ) in err
    by_rank = scores_of(capsys, "evaluate", "mipr", run, "--trec-order", "rank")
    assert by_rank == scores_of(capsys, "evaluate", "mipr", EMBEDDING) != scores_of(capsys, "evaluate", "mipr", run)


def test_judgments_that_change_the_means_are_noted(capsys, tmp_path):
    data_dir = shutil.copytree(MIPR_DIR, tmp_path / "mipr")
    path = data_dir / "mipr_annotation.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["items"] = []
    dropped = rows.pop(1)["idx"]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    code, out, err = run_cli(
        capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", data_dir, "--json", tmp_path / "s.json"
    )
    assert code == 0, err
    assert f"1 queries of {data_dir / 'mipr_query.jsonl'} have no judgment row: they are left out of every mean." in err
    assert "1 judged queries have an empty judgment list: they score 0 and stay in the means." in err
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["runs"][0]["aggregate"]["num_queries"] == 26 and dropped not in saved["runs"][0]["per_query"]


def test_scoring_imports_neither_datasets_nor_pandas(tmp_path):
    code = (
        "import sys; from mmrhub.cli import main; code = main(['evaluate', 'mipr', '--json', sys.argv[1]]); "
        "print(code, [name for name in ('datasets', 'pandas', 'torch', 'mipr') if name in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.json")], capture_output=True, text=True)
    assert result.stdout.splitlines()[-1] == "0 []", result.stderr


def test_info_and_export_read_m2kr_archives_kept_elsewhere(capsys, tmp_path):
    tables = shutil.copytree(M2KR_DIR, tmp_path / "tables", ignore=shutil.ignore_patterns("*.zip*"))
    archives = tmp_path / "disk2"
    archives.mkdir()
    for part in M2KR_DIR.glob("*.zip*"):
        shutil.copy(part, archives)
    code, out, err = run_cli(capsys, "info", "m2kr", "--data-dir", tables, "--images-dir", archives)
    assert code == 0, err
    assert "## challenge_passage (train): 300 rows" in out
    code, out, err = run_cli(capsys, "export", "m2kr", tmp_path / "out", "--data-dir", tables, "--images-dir", archives)
    assert code == 0, err
    assert (tmp_path / "out" / "challenge_passage").is_dir()
    assert "MIPR takes no --images-dir" in one_line_error(capsys, "info", "mipr", "--images-dir", archives)


def test_an_unwritable_cache_is_skipped_not_an_error(capsys, tmp_path, monkeypatch):
    in_the_way = tmp_path / "hf_home_is_a_file"
    in_the_way.write_text("not a folder")
    monkeypatch.setenv("HF_HOME", str(in_the_way))
    code, out, err = run_cli(capsys, "evaluate", "mipr")
    assert code == 0, err
    assert "| Candidate-pool Oracle |" in out


def test_an_unusable_datasets_cache_is_one_line(tmp_path):
    in_the_way = tmp_path / "cache_is_a_file"
    in_the_way.write_text("not a folder")
    env = {**os.environ, "HF_DATASETS_CACHE": str(in_the_way)}
    result = subprocess.run(
        [sys.executable, "-m", "mmrhub.cli", "info", "mipr"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert result.stderr.startswith("mmrhub info: error:") and "Traceback" not in result.stderr, result.stderr


def test_the_executable_exits_with_the_commands_code_and_all_its_output(tmp_path):
    # console() freezes the objects before exiting: output must still be flushed and files written
    code = "from mmrhub.cli import console; console()"
    ok = subprocess.run(
        [sys.executable, "-c", code, "evaluate", "mipr", "--json", str(tmp_path / "s.json")],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "| Candidate-pool Oracle |" in ok.stdout, ok.stderr
    assert json.loads((tmp_path / "s.json").read_text())["benchmark"] == "mipr"
    bad = subprocess.run(
        [sys.executable, "-c", code, "evaluate", "mipr", "--data-dir", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "name the run files to score" in bad.stderr


def test_a_run_with_queries_the_sample_lacks_gets_one_line_naming_the_sample(capsys, tmp_path):
    entries = json.loads(EMBEDDING.read_text())
    queries = len(entries)
    extra = [{"qid": str(qid), "ranked": entries[0]["ranked"]} for qid in range(queries + 1, queries + 51)]
    path = tmp_path / "full.json"
    path.write_text(json.dumps(entries + extra))
    err = one_line_error(capsys, "evaluate", "mipr", path)
    assert err == (
        f"mmrhub evaluate: error: {path}: 50 of its {queries + 50} queries are not in the bundled MIPR sample "
        f"({queries} queries), which was scored as no --data-dir was given: pass --data-dir DIR to score the run "
        "against MIPR's data.\n"
    )
    code, out, err = run_cli(capsys, "evaluate", "mipr", path, "--data-dir", MIPR_DIR)
    assert code == 1 and "--data-dir" not in err  # a folder was given: the sample is not the cause
    assert f"{path} does not fit the benchmark: 50 problem(s):" in err and len(err.splitlines()) == 22


def test_a_relative_data_dir_is_named_as_given(capsys, tmp_path, monkeypatch):
    data_dir = shutil.copytree(MIPR_DIR, tmp_path / "mipr")
    path = data_dir / "mipr_annotation.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"L1"', '"L9"', 1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, "evaluate", "mipr", EMBEDDING, "--data-dir", "mipr")
    assert err.startswith("mmrhub evaluate: error: mipr/mipr_annotation.jsonl idx ") and str(tmp_path) not in err
    code, _, err = run_cli(capsys, "info", "mipr", "--data-dir", "./mipr/")  # the builder's error, datasets' progress
    assert code == 1 and err.splitlines()[-1].startswith("mmrhub info: error: mipr/mipr_annotation.jsonl idx ")
    assert str(tmp_path) not in err


@pytest.mark.parametrize(
    "text, reason",
    [
        ('[{"qid": "1", "ranked": [{"did": "ab', "Unterminated string starting at line 1, column 34"),
        ('[{"qid": "1",\n "ranked": [', "Expecting value"),
    ],
)
def test_a_truncated_json_run_says_where_and_that_it_ends_early(capsys, tmp_path, text, reason):
    run = tmp_path / "cut.json"
    run.write_text(text, encoding="utf-8")
    err = one_line_error(capsys, "evaluate", "mipr", run)
    assert f"not valid JSON ({reason}; the file ends first: is it cut short?)." in err


def test_report_without_matplotlib_gives_the_readmes_install_line(capsys, monkeypatch, tmp_path):
    from mmrhub.commands.report import REPORT_EXTRA

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    code, out, err = run_cli(capsys, "report", "mipr", EMBEDDING, "-o", tmp_path / "report.html")
    assert (code, out) == (1, "") and err.startswith(
        'mmrhub report: error: matplotlib is not installed; the report extra brings it: pip install ".[report]" in '
        'the repository\'s root, or pip install "matplotlib>=3.7" where mmrhub was installed from a wheel.'
    )
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    assert any(f"{REPORT_EXTRA} " in page.read_text(encoding="utf-8") for page in pages)  # the line users are given
    assert not (tmp_path / "report.html").exists()
