"""Every malformed MIPR input fails at preparation with the file, the line or id, and what was expected."""

import subprocess
import sys

import pytest
from _mipr_helpers import edit_jsonl
from _mipr_helpers import expect
from _mipr_helpers import prepare
from _mipr_helpers import read_jsonl
from _paths import ROOT

import mipr
import mipr_format

# Python's json on a second value in a line, with our words
TWO_ON_A_LINE = "not valid JSON (Extra data: a second value here; expected one object a line)."


def test_invalid_json_line(data_dir):
    path = data_dir / "mipr_query.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[4] = '{"idx": "5", "query": "没有结尾"\n'
    path.write_text("".join(lines), encoding="utf-8")
    expect("queries", data_dir, f"{path}: line 5, column ")
    expect("queries", data_dir, ": not valid JSON (")


def test_blank_lines_do_not_shift_line_numbers(data_dir):
    path = data_dir / "mipr_query.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[6] = '{"idx": "7", "query": 7, "image_url": "6.jpg"}\n'
    path.write_text("\n" + "".join(lines), encoding="utf-8")
    expect("queries", data_dir, f'{path} line 8: field "query" must be a string, got int 7.')


def test_missing_field(data_dir):
    edit_jsonl(data_dir / "mipr_corpus.jsonl", lambda rows: rows[9].pop("title"))
    expect("corpus", data_dir, f'{data_dir / "mipr_corpus.jsonl"} line 10: missing field "title".')


def test_mistyped_field(data_dir):
    edit_jsonl(data_dir / "mipr_query.jsonl", lambda rows: rows[2].update(idx=3))
    expect("queries", data_dir, f'{data_dir / "mipr_query.jsonl"} line 3: field "idx" must be a string, got int 3.')


def test_mistyped_judgments(data_dir):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[1].update(items={"item_id": "x"}))
    expect("qrels", data_dir, 'line 2: field "items" must be a list of {"item_id", "final_grade"} objects, got dict.')


def test_judgment_without_grade(data_dir):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[3]["items"][2].pop("final_grade"))
    expect("qrels", data_dir, 'line 4: items[3] field "final_grade" must be a string, got None.')


def test_duplicate_idx(data_dir):
    edit_jsonl(data_dir / "mipr_query.jsonl", lambda rows: rows[20].update(idx="4"))
    expect("queries", data_dir, f'{data_dir / "mipr_query.jsonl"} line 21: duplicate idx "4" (first on line 4).')


def test_duplicate_item_id(data_dir):
    edit_jsonl(data_dir / "mipr_corpus.jsonl", lambda rows: rows[200].update(item_id=rows[0]["item_id"]))
    expect("corpus", data_dir, 'line 201: duplicate item_id "7ab0ab84666fa41b" (first on line 1).')


def test_judged_item_not_in_corpus(data_dir):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[5]["items"][1].update(item_id="ffffffffffffffff"))
    expect("qrels", data_dir, 'idx "6" items[2]: judged item_id "ffffffffffffffff" not in mipr_corpus.jsonl.')


def test_judged_query_not_in_queries(data_dir):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[26].update(idx="999"))
    expect("qrels", data_dir, f'{data_dir / "mipr_annotation.jsonl"} idx "999": query not in mipr_query.jsonl.')


def test_unknown_grade(data_dir):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade="L3"))
    expect("qrels", data_dir, 'idx "8" items[5]: unknown final_grade "L3"; expected one of L1, L2, N1, N2, N3.')


def test_product_judged_twice_for_one_query(data_dir):
    def judge_twice(rows):
        rows[2]["items"].append(dict(rows[2]["items"][0]))

    edit_jsonl(data_dir / "mipr_annotation.jsonl", judge_twice)
    count = len(open(data_dir / "mipr_annotation.jsonl", encoding="utf-8").readlines()[2].split("item_id")) - 1
    expect("qrels", data_dir, f'idx "3" items[{count}]: item_id "')


def test_missing_images_are_all_listed_at_preparation(data_dir):
    image_dir = data_dir / "images" / "product_images"
    removed = sorted(path.name for path in list(image_dir.iterdir())[:3])
    for name in removed:
        (image_dir / name).unlink()
    expect("corpus", data_dir, f"3 image file(s) missing from {image_dir}/: {', '.join(removed)}")


def test_image_names_must_stay_inside_the_image_folder(data_dir):
    edit_jsonl(data_dir / "mipr_query.jsonl", lambda rows: rows[0].update(image_url="../../mipr_query.jsonl"))
    expect("queries", data_dir, "image names must be plain file names under")


def test_missing_table(data_dir):
    (data_dir / "mipr_corpus.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match="mipr_corpus.jsonl"):
        prepare("corpus", data_dir)


def test_unknown_fields_are_reported_not_silently_dropped(data_dir, caplog):
    edit_jsonl(data_dir / "mipr_query.jsonl", lambda rows: rows[0].update(source="taobao"))
    assert prepare("queries", data_dir).column_names == ["idx", "query", "image_url", "image"]
    assert "fields not in the MIPR format are left out: source" in caplog.text


def test_errors_reach_the_user_unwrapped(data_dir, tmp_path):
    edit_jsonl(data_dir / "mipr_query.jsonl", lambda rows: rows[0].pop("query"))
    builder = mipr.Mipr(config_name="queries", data_dir=str(data_dir), cache_dir=str(tmp_path / "c"))
    with pytest.raises(mipr.MiprDataError, match='line 1: missing field "query"'):
        builder.download_and_prepare()


def test_a_field_name_that_is_not_utf8_is_named_by_line_and_byte(data_dir):
    path = data_dir / "mipr_annotation.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"idx"', b'"\xe9idx"', 1))
    expect("qrels", data_dir, f"{path}: line 1, byte offset 2: 0xe9 is not valid UTF-8; expected UTF-8 text")


def test_unknown_judgment_fields_are_reported(data_dir, caplog):
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[3]["items"][0].update(note="x"))
    assert len(prepare("qrels", data_dir)) == len(read_jsonl(data_dir / "mipr_annotation.jsonl"))
    assert "fields not in the MIPR format are left out: items.note" in caplog.text


# Read in a child process: pyarrow's inferring reader took the whole process down on this line.
READ_QUERIES = """
import sys, mipr_format
try:
    mipr_format.read_table(sys.argv[1], "queries")
except mipr_format.MiprDataError as err:
    print(err)
"""


def test_an_unknown_field_nested_200000_levels_is_refused_by_line_not_a_crash(data_dir):
    path = data_dir / "mipr_query.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip()[:-1] + ', "extra": ' + "[" * 200_000 + "]" * 200_000 + "}\n"
    path.write_text("".join(lines), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", READ_QUERIES, str(path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        done.stdout
        == f"{path}: line 3: JSON nested too deeply to read; expected lists and objects a few levels deep.\n"
    )


# --- one record a line: pyarrow reads a stream of JSON values whatever the lines, so the lines are checked too ---


def refusal(config, data_dir) -> str:
    """The whole message of the MiprDataError that preparing ``config`` raises."""
    with pytest.raises(mipr.MiprDataError) as caught:
        prepare(config, data_dir)
    return str(caught.value)


def join_with_next(path, number) -> tuple:
    """Put line ``number + 1`` of ``path`` on line ``number``; the byte offset of line ``number`` and its first
    record's text."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first = lines[number - 1].rstrip("\n")
    lines[number - 1 : number + 1] = [first + lines[number]]
    path.write_text("".join(lines), encoding="utf-8")
    return sum(len(line.encode()) for line in lines[: number - 1]), first


def spread_over_two_lines(path, number) -> tuple:
    """Break line ``number`` after its first field; the byte offset of the line and its first part."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    head, tail = lines[number - 1].split(", ", 1)
    lines[number - 1] = head + ",\n" + tail
    path.write_text("".join(lines), encoding="utf-8")
    return sum(len(line.encode()) for line in lines[: number - 1]), head + ","


@pytest.mark.parametrize(
    ("name", "number", "config"),
    [
        ("mipr_query.jsonl", 5, "queries"),
        ("mipr_annotation.jsonl", 12, "qrels"),
        ("mipr_corpus.jsonl", 200, "qrels"),  # the qrels config reads the corpus for its item_id column alone
    ],
)
def test_two_records_on_one_line_are_refused_naming_the_line(data_dir, name, number, config):
    path = data_dir / name
    start, first = join_with_next(path, number)
    column, offset = len(first) + 1, start + len(first.encode())
    expected = f"{path}: line {number}, column {column}, byte offset {offset}: {TWO_ON_A_LINE}"
    assert refusal(config, data_dir) == expected


# Alone, and with two records joined on a later line: as many records as lines then, yet not one a line.
@pytest.mark.parametrize("also_joined", [None, 11])
def test_a_record_spread_over_two_lines_is_refused_naming_its_first(data_dir, also_joined):
    path = data_dir / "mipr_query.jsonl"
    if also_joined:
        join_with_next(path, also_joined)
    start, head = spread_over_two_lines(path, 5)
    column, offset = len(head) + 1, start + len(head.encode())
    reason = "not valid JSON (Expecting property name enclosed in double quotes)."
    assert refusal("queries", data_dir) == f"{path}: line 5, column {column}, byte offset {offset}: {reason}"


def test_lines_ended_by_a_carriage_return_alone_are_one_line(data_dir):
    path = data_dir / "mipr_query.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    column, offset = len(first) + 2, len(first.encode()) + 1
    expected = f"{path}: line 1, column {column}, byte offset {offset}: {TWO_ON_A_LINE}"
    assert refusal("queries", data_dir) == expected


def test_crlf_blank_lines_spaces_and_no_final_newline_are_still_one_record_a_line(data_dir):
    path = data_dir / "mipr_query.jsonl"
    ids = [row["idx"] for row in read_jsonl(path)]
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\xef\xbb\xbf\r\n \t\r\n" + b"\r\n\r\n".join(b"  " + line + b" \t" for line in lines))
    assert list(prepare("queries", data_dir)["idx"]) == ids


@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 5, 64])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_lines_are_checked_across_read_blocks(data_dir, monkeypatch, block_size, newline):
    path = data_dir / "mipr_query.jsonl"
    lines = [line + newline for line in path.read_bytes().splitlines()]
    path.write_bytes(b"".join(lines))
    monkeypatch.setattr(mipr_format, "_BLOCK_SIZE", block_size)  # pyarrow's block too: it reads again, whole lines
    assert mipr_format.read_table(str(path), "queries").num_rows == 27
    for number in (1, 2, 26):
        broken = lines[: number - 1] + [lines[number - 1].rstrip(b"\r\n") + lines[number]] + lines[number + 1 :]
        path.write_bytes(b"".join(broken))
        with pytest.raises(mipr_format.MiprDataError) as caught:
            mipr_format.read_table(str(path), "queries")
        assert str(caught.value).startswith(f"{path}: line {number}, column ")
        assert str(caught.value).endswith(f": {TWO_ON_A_LINE}")
