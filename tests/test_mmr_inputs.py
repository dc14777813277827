"""The one way in (``mmr_inputs``): what a hostile review fed the readers, each refused in one line naming the file,
line and byte offset, or read as what it is."""

import csv
import gzip
import json
import os
import re
import shutil

import pytest
from _mipr_helpers import copy_sample
from _mipr_helpers import expect
from _mipr_helpers import read_jsonl
from _mipr_helpers import write_jsonl
from _paths import ROOT

import m2kr
import mipr
import mmr_inputs
from mmr_inputs import InputError
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.cli import main
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.run import FORMATS
from mmrhub.scoring.runs.run import RunError
from mmrhub.scoring.score import read_valid_run

MIPR_DIR = ROOT / "data" / "mipr"
TREC = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\nq2 Q0 d3 1 0.5 tag\n"
UTF8_HINT = "expected UTF-8 text (or UTF-16 with a byte-order mark)."

# Python's json on a second value in a line, with our words
TWO_ON_A_LINE = "not valid JSON (Extra data: a second value here; expected one object a line)."


def refused(path, message):
    with pytest.raises(RunError) as caught:
        read_run(path)
    assert str(caught.value) == message


def rankings(run) -> list:
    return list(zip(run.query_ids.to_pylist(), run.rankings.to_pylist(), run.scores.to_pylist()))


# --- encodings --------------------------------------------------------------------------------------------------


def test_a_latin1_byte_in_a_json_run_names_the_file_line_and_byte(tmp_path):
    path = tmp_path / "run.json"
    data = b'[{"qid": "1",\n "ranked": [{"did": "caf\xe9", "score": 1.0}]}]'
    path.write_bytes(data)
    offset = data.index(0xE9)
    refused(
        path,
        f"{path}: line 2, byte offset {offset}: 0xe9 is not valid UTF-8; {UTF8_HINT} (read as {FORMATS['json']})",
    )


def test_a_utf16_run_with_a_byte_order_mark_is_read_as_its_utf8_twin(tmp_path):
    plain, wide = tmp_path / "plain.trec", tmp_path / "wide.trec"
    plain.write_text(TREC, encoding="utf-8")
    wide.write_text(TREC, encoding="utf-16")  # Python writes the byte-order mark
    assert wide.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert rankings(read_run(wide)) == rankings(read_run(plain))


def test_utf16_without_a_byte_order_mark_is_refused_not_read_as_trec(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(TREC.encode("utf-16-le"))
    refused(path, f"{path}: line 1, byte offset 1: a NUL byte; expected UTF-8 text (UTF-16 needs a byte-order mark).")


def test_a_gzipped_run_is_read_as_its_plain_twin(tmp_path):
    plain, packed = tmp_path / "plain.trec", tmp_path / "packed.trec.gz"
    plain.write_text(TREC, encoding="utf-8")
    packed.write_bytes(gzip.compress(TREC.encode()))
    run = read_run(packed)
    assert rankings(run) == rankings(read_run(plain)) and run.name == "packed"


def test_a_gzip_bomb_is_bounded():
    data = gzip.compress(b"\n" * 10_000)
    with pytest.raises(InputError, match=re.escape("x.gz: decompresses to more than 100 bytes; expected at most")):
        mmr_inputs.decompress("x.gz", data, "gzip", limit=100)


def test_a_cr_only_trec_run_is_read_line_by_line(tmp_path):
    plain, old_mac = tmp_path / "plain.trec", tmp_path / "old_mac.trec"
    plain.write_text(TREC, encoding="utf-8")
    old_mac.write_bytes(TREC.replace("\n", "\r").encode())
    assert rankings(read_run(old_mac)) == rankings(read_run(plain))


# --- formats that are not TREC ----------------------------------------------------------------------------------


def test_a_semicolon_separated_kaggle_csv_is_refused_by_name(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text('question_id;passage_id\n1;["a", "b"]\n', encoding="utf-8")
    refused(
        path,
        f"{path}: line 1: fields separated by ';' ('question_id;passage_id'); expected {FORMATS['kaggle']}, "
        "separated by ','.",
    )


def test_a_kaggle_csv_with_another_header_is_refused_by_name(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text('qid,passages\n1,"[""a"", ""b""]"\n', encoding="utf-8")
    refused(
        path,
        f"{path}: line 1: a CSV of 2 columns ('qid,passages'); expected {FORMATS['kaggle']}, headed "
        "question_id,passage_id or without a header.",
    )


def test_json_with_a_leading_comment_is_refused_by_name(tmp_path):
    path = tmp_path / "run.json"
    path.write_text('\n// my run\n[{"qid": "1", "ranked": []}]\n', encoding="utf-8")
    refused(path, f"{path}: line 2 is a comment ('// my run'); no run format has comments.")


# --- numbers and nesting ----------------------------------------------------------------------------------------


def test_a_rank_beyond_64_bits_names_its_line(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(TREC + f"q2 Q0 d4 {2**63} 0.25 tag\n", encoding="utf-8")
    refused(
        path,
        f"{path}: line 4: rank '{2**63}' is out of range; expected a 64-bit integer (read as {FORMATS['trec']})",
    )


@pytest.mark.parametrize(("opening", "kind"), [(b"[", "json"), (b'{"q": ', "dict")])
def test_200000_nested_arrays_are_refused_in_one_line(tmp_path, opening, kind):
    path = tmp_path / "run.json"
    path.write_bytes(opening + b"[" * 200_000 + b"]" * 200_000 + (b"]" if kind == "json" else b"}"))
    refused(
        path,
        f"{path}: JSON nested too deeply to read; expected lists and objects a few levels deep. "
        f"(read as {FORMATS[kind]})",
    )


def test_a_number_beyond_a_double_in_a_left_out_corpus_field_names_its_line(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_corpus.jsonl"
    rows = read_jsonl(path)
    write_jsonl(path, rows)
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    text[2] = text[2].rstrip("}\n") + ', "price": 1e400}\n'
    path.write_text("".join(text), encoding="utf-8")
    expect(
        "corpus",
        data_dir,
        f'{path} line 3: field "price" holds a number beyond a double or a 64-bit integer, which pyarrow cannot read.',
    )


# --- JSON Lines: one record per line, each key once -------------------------------------------------------------


def test_a_repeated_key_in_a_json_lines_record_names_its_line(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_query.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].replace('{"idx": ', '{"idx": "x", "idx": ', 1)
    path.write_text("".join(lines), encoding="utf-8")
    expect("queries", data_dir, f"{path}: line 3: key 'idx' appears twice in one object; expected each once.")


def test_two_records_on_one_line_name_that_line_not_a_later_one(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_query.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\n") + " " + json.dumps({"idx": "x2", "query": "q", "image_url": "1.jpg"}) + "\n"
    lines[20] = lines[20].replace(json.loads(lines[20])["idx"], json.loads(lines[4])["idx"], 1)  # a duplicate
    path.write_text("".join(lines), encoding="utf-8")
    column = len(lines[2].split("} {")[0]) + 3
    offset = sum(len(line.encode()) for line in lines[:2]) + len(lines[2][: column - 1].encode())
    expect(
        "queries",
        data_dir,
        f"{path}: line 3, column {column}, byte offset {offset}: {TWO_ON_A_LINE}",
    )


# --- a Kaggle CSV is M2KR's ---------------------------------------------------------------------------------------


def test_a_kaggle_csv_scored_against_mipr_says_it_is_m2kr_s_format(tmp_path):
    entries = json.loads((MIPR_DIR / "baseline" / "simulated_embedding_top50.json").read_text(encoding="utf-8"))
    path = tmp_path / "top5.csv"
    rows = [[entry["qid"], json.dumps([item["did"] for item in entry["ranked"][:5]])] for entry in entries]
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([["question_id", "passage_id"], *rows])
    mipr_run, _ = read_valid_run(
        ScoringRequest(BENCHMARKS["mipr"], str(MIPR_DIR)), BENCHMARKS["mipr"].read_truth(MIPR_DIR), path
    )
    assert mipr_run.notes == [
        f"{path} is a Kaggle CSV, M2KR's submission format: it is scored against MIPR as its lists of ids, "
        "without scores."
    ]


# --- special files ----------------------------------------------------------------------------------------------


def test_info_refuses_a_fifo_data_file_instead_of_waiting(tmp_path, capsys):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_query.jsonl"
    path.unlink()
    os.mkfifo(path)
    assert main(["info", "mipr", "--data-dir", str(data_dir)]) == 1
    assert f"{path}: not a regular file (a FIFO); expected a file to read." in capsys.readouterr().err


def test_info_refuses_dev_zero_instead_of_reading_it(tmp_path, capsys):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_corpus.jsonl"
    path.unlink()
    path.symlink_to("/dev/zero")
    assert main(["info", "mipr", "--data-dir", str(data_dir)]) == 1
    assert f"{path}: not a regular file (a character device); expected a file to read." in capsys.readouterr().err


def test_a_run_that_is_a_fifo_is_refused(tmp_path):
    path = tmp_path / "run.trec"
    os.mkfifo(path)
    refused(path, f"{path}: not a regular file (a FIFO); expected a file to read.")


def test_an_m2kr_table_that_is_a_fifo_is_refused(tmp_path):
    data_dir = tmp_path / "m2kr"
    shutil.copytree(m2kr.SAMPLE_DIR, data_dir)
    table = next((data_dir / "challenge_answers").glob("*.parquet"))
    table.unlink()
    os.mkfifo(table)
    with pytest.raises(m2kr.M2krDataError, match=re.escape(f"{table}: not a regular file (a FIFO)")):
        m2kr.load("challenge_answers", data_dir=str(data_dir), cache_dir=str(tmp_path / "cache"))


def test_a_fifo_is_named_by_mipr_too(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    path = data_dir / "mipr_annotation.jsonl"
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(mipr.MiprDataError, match=re.escape(f"{path}: not a regular file (a FIFO)")):
        mipr.load("qrels", data_dir=str(data_dir), cache_dir=str(tmp_path / "cache"))
