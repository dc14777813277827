"""Bad M2KR tables: every one is a named M2krDataError, raised at preparation (also when streaming)."""

import re
import shutil

import pyarrow as pa
import pytest
from _m2kr_helpers import png_bytes
from _m2kr_helpers import prepare
from _m2kr_helpers import replace_passage_members
from _m2kr_helpers import source_rows
from _m2kr_helpers import write_rows

import m2kr

FILE = "train-00000-of-00001.parquet"


def _fails(data_dir, config, message, tmp_path):
    with pytest.raises(m2kr.M2krDataError, match=message):
        prepare(config, data_dir, tmp_path / "cache")
    with pytest.raises(m2kr.M2krDataError, match=message):
        m2kr.M2kr(config_name=config, data_dir=str(data_dir)).as_streaming_dataset(split="train")


def test_missing_column(data_dir, tmp_path):
    rows = [{k: v for k, v in row.items() if k != "instruction"} for row in source_rows("challenge_data")]
    schema = m2kr.SOURCE_SCHEMAS["challenge_data"].remove(1)
    write_rows(data_dir, "challenge_data", rows, schema)
    message = (
        f"challenge_data/{FILE}: missing column(s) instruction; expected columns img_path, instruction, question, "
        "question_id, pos_item_ids, pos_item_contents."
    )
    _fails(data_dir, "challenge_data", re.escape(message), tmp_path)


def test_missing_column_of_a_joined_table(data_dir, tmp_path):
    rows = [{"passage_id": row["passage_id"]} for row in source_rows("challenge_passage")]
    write_rows(data_dir, "challenge_passage", rows, pa.schema([("passage_id", pa.string())]))
    message = f"challenge_passage/{FILE}: missing column(s) passage_content, page_screenshot"
    _fails(data_dir, "challenge_answers", re.escape(message), tmp_path)


def test_column_of_the_wrong_type(data_dir, tmp_path):
    rows = [{**row, "pos_item_ids": ",".join(row["pos_item_ids"])} for row in source_rows("challenge_answers")]
    schema = pa.schema([("question_id", pa.string()), ("pos_item_ids", pa.string())])
    write_rows(data_dir, "challenge_answers", rows, schema)
    expected = m2kr.SOURCE_SCHEMAS["challenge_answers"].field("pos_item_ids").type
    message = f"challenge_answers/{FILE}: column pos_item_ids is string, expected {expected}."
    _fails(data_dir, "challenge_answers", re.escape(message), tmp_path)


def test_extra_columns_are_left_out_with_a_warning(data_dir, tmp_path, caplog):
    rows = [{**row, "notes": "x"} for row in source_rows("challenge_answers")]
    schema = m2kr.SOURCE_SCHEMAS["challenge_answers"].append(pa.field("notes", pa.string()))
    write_rows(data_dir, "challenge_answers", rows, schema)
    assert prepare("challenge_answers", data_dir, tmp_path / "cache").column_names == ["question_id", "pos_item_ids"]
    assert f"challenge_answers/{FILE}: columns not in the M2KR format are left out: notes" in caplog.text


def test_null_id(data_dir, tmp_path):
    rows = source_rows("challenge_passage")
    rows[3]["passage_id"] = None
    write_rows(data_dir, "challenge_passage", rows)
    _fails(data_dir, "challenge_passage", re.escape(f"challenge_passage/{FILE} row 4: passage_id is null."), tmp_path)


@pytest.mark.parametrize("config", ["challenge_data", "challenge_answers"])
def test_duplicate_question_id(data_dir, tmp_path, config):
    rows = source_rows(config)
    rows[20]["question_id"] = rows[4]["question_id"]
    write_rows(data_dir, config, rows)
    message = f'{config}/{FILE} row 21: duplicate id "{rows[4]["question_id"]}" (first at row 5).'
    _fails(data_dir, config, re.escape(message), tmp_path)


def test_duplicate_passage_id(data_dir, tmp_path):
    rows = source_rows("challenge_passage")
    write_rows(data_dir, "challenge_passage", rows + [rows[0]])
    message = f'challenge_passage/{FILE} row 301: duplicate id "Q5247669" (first at row 1).'
    _fails(data_dir, "challenge_passage", re.escape(message), tmp_path)


def test_answers_pointing_to_unknown_passages(data_dir, tmp_path):
    rows = source_rows("challenge_answers")
    rows[0]["pos_item_ids"] = ["Q5247669", "A999999999"]
    rows[29]["pos_item_ids"] = ["27558"]  # the A-stripped Kaggle form is not a passage id
    write_rows(data_dir, "challenge_answers", rows)
    message = (
        f"challenge_answers/{FILE}: positives not in challenge_passage.passage_id (challenge_passage/{FILE}): "
        'question_id "4100" -> A999999999; '
        f'question_id "{rows[29]["question_id"]}" -> 27558.'
    )
    _fails(data_dir, "challenge_answers", re.escape(message), tmp_path)


def test_answers_without_positives(data_dir, tmp_path):
    rows = source_rows("challenge_answers")
    rows[2]["pos_item_ids"] = []
    rows[7]["pos_item_ids"] = None
    write_rows(data_dir, "challenge_answers", rows)
    _fails(data_dir, "challenge_answers", re.escape(f"challenge_answers/{FILE} row 8: pos_item_ids is null."), tmp_path)
    rows[7]["pos_item_ids"] = []
    write_rows(data_dir, "challenge_answers", rows)
    listed = f"{rows[2]['question_id']}, {rows[7]['question_id']}"
    message = f"challenge_answers/{FILE}: no positive passage for question_id(s) {listed}."
    _fails(data_dir, "challenge_answers", re.escape(message), tmp_path)


def test_answers_for_unknown_queries(data_dir, tmp_path):
    rows = source_rows("challenge_answers")
    rows[5]["question_id"] = "999"
    write_rows(data_dir, "challenge_answers", rows)
    message = f"challenge_answers/{FILE}: 1 question_id(s) not in challenge_data (challenge_data/{FILE}): 999."
    _fails(data_dir, "challenge_answers", re.escape(message), tmp_path)


def test_every_missing_image_member_is_listed(data_dir, tmp_path):
    rows = source_rows("challenge_passage")
    rows[0]["page_screenshot"] = "missing-1.png"
    rows[299]["page_screenshot"] = "missing-2.png"
    write_rows(data_dir, "challenge_passage", rows)
    message = (
        f"challenge_passage: 2 image(s) not found in {data_dir / 'Web_Image.zip.001'} (+2 parts): "
        f"missing-1.png (passage_id Q5247669: no such member); missing-2.png (passage_id {rows[299]['passage_id']}: "
        "no such member)."
    )
    _fails(data_dir, "challenge_passage", re.escape(message), tmp_path)


def test_missing_query_image(data_dir, tmp_path):
    rows = source_rows("challenge_data")
    rows[12]["img_path"] = "gone.jpg"
    write_rows(data_dir, "challenge_data", rows)
    message = (
        f"challenge_data: 1 image(s) not found in {data_dir / 'query_images.zip'}: gone.jpg (question_id 4184: no "
        "such member)."
    )
    _fails(data_dir, "challenge_data", re.escape(message), tmp_path)


def test_ambiguous_member_is_reported(data_dir, tmp_path):
    replace_passage_members(data_dir, extra=[("Copies/Q5247669.png", png_bytes())])
    message = "Q5247669.png (passage_id Q5247669: ambiguous: Web_Image/Q5247669.png, Copies/Q5247669.png)"
    _fails(data_dir, "challenge_passage", re.escape(message), tmp_path)


def test_exact_member_names_are_used_as_is(data_dir, tmp_path):
    rows = source_rows("challenge_passage")
    rows[0]["page_screenshot"] = "Web_Image/Q5247669.png"
    write_rows(data_dir, "challenge_passage", rows)
    replace_passage_members(data_dir, extra=[("Copies/Q5247669.png", png_bytes())])
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    assert dataset[0]["image"].size == (48, 32)


def test_no_tables(data_dir, tmp_path):
    shutil.rmtree(data_dir / "challenge_data")
    message = f"No challenge_data/train-*.parquet under {data_dir}."
    _fails(data_dir, "challenge_data", re.escape(message), tmp_path)


def test_a_damaged_data_page_is_named(data_dir, tmp_path):
    path = data_dir / "challenge_passage" / FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64  # inside the pages: the footer still reads
    path.write_bytes(bytes(data))
    with pytest.raises(m2kr.M2krDataError, match=re.escape(f"challenge_passage/{FILE}: not a readable Parquet file (")):
        prepare("challenge_passage", data_dir, tmp_path / "cache", check_images=False)


def test_a_table_without_rows_is_refused_naming_the_file(data_dir, tmp_path):
    write_rows(data_dir, "challenge_answers", [])
    path = data_dir / "challenge_answers" / "train-00000-of-00001.parquet"
    message = (
        f"{path}: no rows. An M2KR challenge_answers table has at least one; the file was written empty or cut short."
    )
    _fails(data_dir, "challenge_answers", f"^{re.escape(message)}$", tmp_path)
