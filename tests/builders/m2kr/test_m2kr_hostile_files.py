"""Hostile M2KR input: lying zip headers, parts swapped or replaced, flipped bytes, odd paths, archives in the
card's images/ folder, stale caches, and no Hub. Every refusal is a named M2krDataError (or FileNotFoundError)."""

import errno
import io
import json
import logging
import os
import re
import shutil
import struct
import zipfile

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36
from _m2kr_helpers import PASSAGE_PARTS
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import copy_sample
from _m2kr_helpers import joined_bytes
from _m2kr_helpers import prepare
from _m2kr_helpers import source_rows
from _m2kr_helpers import write_rows
from _m2kr_helpers import write_split
from _m2kr_helpers import zip_bytes

import m2kr
import m2kr_archive
import mmr_cache

FILE = "train-00000-of-00001.parquet"
FIRST = "Web_Image/Q5247669.png"  # the member of passage row 0, deflated, at byte 0 of the joined zip


def label(data_dir):
    return f"{data_dir / PASSAGE_PARTS[0]} (+2 parts)"


def refused(data_dir, tmp_path, message, config="challenge_passage", **kwargs):
    with pytest.raises(m2kr.M2krDataError, match=re.escape(message)):
        prepare(config, data_dir, tmp_path / "cache", **kwargs)


# --- zip limits on the bytes actually inflated ------------------------------------------------------------------


def _claim_size(data: bytearray, member: str, size: int):
    """Rewrite the uncompressed size a member's local header and central record list."""
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    struct.pack_into("<I", data, archive.getinfo(member).header_offset + 22, size)
    record = archive.start_dir
    while data[record + 46 : record + 46 + len(member)] != member.encode():
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, record + 28)
        record += 46 + name_length + extra_length + comment_length
    struct.pack_into("<I", data, record + 24, size)


def test_a_member_inflating_past_its_listed_size_stops_at_once(data_dir, tmp_path):
    bomb = bytes(10 * 2**20)  # 10 MB of zeros, about 10 KB deflated
    replace = zip_bytes([(FIRST, bomb), ("Web_Image/other.png", b"x")], compression=zipfile.ZIP_DEFLATED)
    data = bytearray(replace)
    _claim_size(data, FIRST, 1024)
    write_split(data_dir, bytes(data))
    rows = source_rows("challenge_passage")[:1]
    write_rows(data_dir, "challenge_passage", rows)
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")  # the headers look fine
    message = f"{data_dir / PASSAGE_PARTS[0]}: member '{FIRST}' inflates past the 1,024 bytes its header lists;"
    with pytest.raises(m2kr.M2krDataError, match=re.escape(message)):
        dataset[0]


def test_the_bounds_hold_on_the_bytes_read(data_dir, tmp_path, monkeypatch):
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    monkeypatch.setattr(m2kr_archive, "MAX_COMPRESSION_RATIO", 1)
    monkeypatch.setattr(m2kr_archive, "check_member", lambda info, archive: None)  # as if the headers had passed
    m2kr_archive.SplitZipFileSystem.clear_instance_cache()
    with pytest.raises(m2kr.M2krDataError, match=re.escape(f"member '{FIRST}' inflates 171 bytes to ")):
        dataset[0]


# --- parts in the wrong order, replaced or with flipped bytes -----------------------------------------------------


def test_swapped_parts_are_refused_at_build(data_dir, tmp_path):
    first, second = (data_dir / part for part in PASSAGE_PARTS[:2])
    one, two = first.read_bytes(), second.read_bytes()
    first.write_bytes(two)
    second.write_bytes(one)
    message = (
        f"{label(data_dir)}: member '{FIRST}' has no local header at byte 0 (in {first}), where the zip directory "
        "puts it: the parts are out of order, or a part was replaced or corrupted."
    )
    refused(data_dir, tmp_path, message)


def test_a_replaced_middle_part_is_refused_at_build(data_dir, tmp_path):
    second = data_dir / PASSAGE_PARTS[1]
    second.write_bytes(bytes(reversed(second.read_bytes())))
    refused(data_dir, tmp_path, f"(in {second}), where the zip directory puts it: the parts are out of order")


def test_the_last_two_parts_swapped_are_called_out_of_order(data_dir, tmp_path):
    second, third = (data_dir / part for part in PASSAGE_PARTS[1:])
    two, three = second.read_bytes(), third.read_bytes()
    second.write_bytes(three)
    third.write_bytes(two)
    first = data_dir / PASSAGE_PARTS[0]
    message = (
        f"Archive parts look out of order: {second} ends with the zip end record, which only the last part ({third}) "
        f"holds; the parts as found: {first} (29,723 bytes), {second} (29,722 bytes), {third} (29,723 bytes). Give "
        "each part back the name it was split with."
    )
    refused(data_dir, tmp_path, message)


def test_a_fake_end_record_in_the_zip_comment_is_refused(data_dir, tmp_path):
    path = data_dir / "query_images.zip"
    data = path.read_bytes()
    assert data[-22:-18] == b"PK\x05\x06" and data[-2:] == b"\0\0"  # the end record, no comment yet
    fake = b"PK\x05\x06" + bytes(18)  # an end record listing no members, at the very end
    path.write_bytes(data[:-2] + struct.pack("<H", len(fake)) + fake)
    assert zipfile.ZipFile(path).infolist() == []  # what zipfile reads: an empty archive
    message = (
        f"{path}: the zip end record read lists no members, yet {len(data):,} bytes precede it: it is not the "
        "archive's own (a fake one in the archive comment?) or the archive is corrupt; refusing it."
    )
    refused(data_dir, tmp_path, message, "challenge_data")


def _flip_data_byte(data_dir, compression):
    data = bytearray(joined_bytes(data_dir))
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = next(info for info in archive.infolist() if info.compress_type == compression)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0x01
    write_split(data_dir, bytes(data))
    return info


def test_a_flipped_byte_in_a_stored_member_fails_its_crc(data_dir, tmp_path):
    info = _flip_data_byte(data_dir, zipfile.ZIP_STORED)
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    row = dataset["page_screenshot"].index(info.filename.rsplit("/", 1)[1])
    message = re.escape(f"member '{info.filename}' has CRC-32 ") + ".*its bytes were changed, or a part was replaced"
    with pytest.raises(m2kr.M2krDataError, match=message):
        dataset[row]
    assert dataset[row - 1]["image"].size == (48, 32)


def test_a_flipped_byte_in_a_deflated_member_is_named(data_dir, tmp_path):
    _flip_data_byte(data_dir, zipfile.ZIP_DEFLATED)
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    with pytest.raises(m2kr.M2krDataError, match=re.escape(f"{data_dir / PASSAGE_PARTS[0]}: member '{FIRST}'")):
        dataset[0]


def test_other_compression_methods_are_refused(data_dir, tmp_path):
    data = bytearray(joined_bytes(data_dir))
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    data[archive.start_dir + 10] = zipfile.ZIP_LZMA  # the first central record's method
    write_split(data_dir, bytes(data))
    refused(data_dir, tmp_path, f"member '{FIRST}' uses compression method 14, where stored (0) or deflated (8)")


# --- paths and where the archives are -----------------------------------------------------------------------------


def test_a_pipe_in_the_archive_path_is_refused(tmp_path):
    data_dir = copy_sample(tmp_path / "a|b")
    message = f"{data_dir / PASSAGE_PARTS[0]}: an archive path must not contain '|' or '::'"
    refused(data_dir, tmp_path, message)
    assert prepare("challenge_answers", data_dir, tmp_path / "cache").num_rows == 30  # tables need no archive


def test_a_chain_separator_in_the_data_folder_is_refused(tmp_path):
    data_dir = copy_sample(tmp_path / "a::b")
    refused(data_dir, tmp_path, f"data_dir {data_dir}: a local path must not contain '::'", "challenge_answers")


def _move_archives(data_dir, target):
    target.mkdir(exist_ok=True)
    for name in (*PASSAGE_PARTS, "query_images.zip"):
        shutil.move(data_dir / name, target / name)


def test_archives_in_the_cards_images_folder_are_found(data_dir, tmp_path):
    _move_archives(data_dir, data_dir / "images")
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    assert dataset[0]["image"].size == (48, 32)
    assert prepare("challenge_data", data_dir, tmp_path / "cache")[0]["image"].size == (40, 40)


def test_an_explicit_images_dir(data_dir, tmp_path):
    _move_archives(data_dir, tmp_path / "elsewhere")
    passages = m2kr.load(
        "challenge_passage",
        data_dir=str(data_dir),
        images_dir=str(tmp_path / "elsewhere"),
        cache_dir=str(tmp_path / "cache"),
    )
    assert passages[299]["image"].size == (48, 32)


def test_parts_spread_over_two_folders_are_refused_listing_both(data_dir, tmp_path):
    (data_dir / "images").mkdir()
    shutil.move(data_dir / PASSAGE_PARTS[2], data_dir / "images" / PASSAGE_PARTS[2])
    message = (
        "challenge_passage: archive Web_Image.zip.001, Web_Image.zip.002, Web_Image.zip.003 not found together in "
        f"one folder; looked in {data_dir / 'images'}/ (missing Web_Image.zip.001, Web_Image.zip.002) and "
        f"{data_dir}/ (missing Web_Image.zip.003); pass images_dir= (--images-dir) the folder that holds them."
    )
    with pytest.raises(FileNotFoundError, match=re.escape(message)):
        prepare("challenge_passage", data_dir, tmp_path / "cache")


def test_an_archive_in_both_folders_is_read_from_images_and_named(data_dir, tmp_path, caplog):
    (data_dir / "images").mkdir()
    stale = data_dir / "images" / "query_images.zip"
    source = zipfile.ZipFile(data_dir / "query_images.zip")
    stale.write_bytes(zip_bytes([(info.filename, source.read(info)) for info in source.infolist()[1:]]))
    first = source_rows("challenge_data")[0]
    message = (
        f"challenge_data: 1 image(s) not found in {stale}: {first['img_path']} (question_id {first['question_id']}: "
        "no such member)."
    )
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        refused(data_dir, tmp_path, message, "challenge_data")
    assert (
        f"challenge_data: query_images.zip is in both {data_dir / 'images'}/ and {data_dir}/; reading "
        f"{data_dir / 'images'}/ (tried first). Pass images_dir= (--images-dir) the folder to read, or remove the "
        "stale copy."
    ) in caplog.text


def test_check_images_false_reads_no_archive(data_dir, tmp_path, caplog):
    for part in (*PASSAGE_PARTS, "query_images.zip"):
        (data_dir / part).unlink()
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        dataset = m2kr.load(
            "challenge_passage", data_dir=str(data_dir), check_images=False, cache_dir=str(tmp_path / "cache")
        )
    assert dataset.num_rows == 300 and dataset[0]["image"] is None
    assert dataset.features == m2kr.FEATURES["challenge_passage"]
    assert "check_images=False (--no-check-images), so no archive is read and the image column is empty" in caplog.text


# --- Parquet errors name the file ---------------------------------------------------------------------------------


def test_a_file_that_is_not_parquet_is_named(data_dir, tmp_path):
    (data_dir / "challenge_passage" / FILE).write_bytes(b"not parquet")
    refused(data_dir, tmp_path, f"challenge_passage/{FILE}: not a readable Parquet file (", "challenge_answers")


def test_a_duplicate_across_files_names_both(data_dir, tmp_path):
    rows = source_rows("challenge_answers")
    write_rows(data_dir, "challenge_answers", rows[:20])
    second = "train-00001-of-00002.parquet"
    shutil.copy(data_dir / "challenge_answers" / FILE, data_dir / "challenge_answers" / second)
    message = f'challenge_answers/{second} row 1: duplicate id "4100" (first at challenge_answers/{FILE} row 1).'
    refused(data_dir, tmp_path, message, "challenge_answers")


# --- a full disk ----------------------------------------------------------------------------------------------------


def test_a_full_cache_disk_names_the_cache_folder(data_dir, tmp_path, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(datasets.arrow_writer.ArrowWriter, "write_table", full)
    message = (
        f"[Errno 28] No space left in the datasets cache {tmp_path / 'cache'} (No space left on device) while writing "
        "challenge_answers: free space there, or point HF_DATASETS_CACHE (or cache_dir=) at a folder on a disk with "
        "room."
    )
    with pytest.raises(OSError, match=f"^{re.escape(message)}$"):
        prepare("challenge_answers", data_dir, tmp_path / "cache")


# --- one default config; one default source ----------------------------------------------------------------------


def test_challenge_data_is_the_default_everywhere(tmp_path):
    assert m2kr.M2kr.DEFAULT_CONFIG_NAME == "challenge_data"
    assert m2kr.M2kr(data_dir=str(SAMPLE), cache_dir=str(tmp_path)).config.name == "challenge_data"
    assert "img_path" in m2kr.load(cache_dir=str(tmp_path)).column_names


def test_the_bundled_sample_is_the_default_of_load_and_of_the_builder(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        builder = m2kr.M2kr(config_name="challenge_answers", cache_dir=str(tmp_path))
    assert builder.config.data_dir == str(SAMPLE)
    assert f"No data_dir given: loading the bundled M2KR sample {SAMPLE}, not the benchmark." in caplog.text
    builder.download_and_prepare()
    assert (
        builder.as_dataset(split="train").to_list() == m2kr.load("challenge_answers", cache_dir=str(tmp_path)).to_list()
    )


def test_without_data_dir_or_sample_says_what_to_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(m2kr.M2kr, "SAMPLE_DIR", tmp_path / "no-sample")  # a datasets 3.6 script's copy
    builder = m2kr.M2kr(config_name="challenge_answers", cache_dir=str(tmp_path))
    message = (
        "No data_dir given, and no bundled sample beside this script: pass data_dir= a local folder laid out like "
        "the Hub repos (<config>/train-*.parquet, and the archives in images/ or beside them), or "
        f"data_dir='{m2kr.HUB_TABLES}' to read the Hub."
    )
    with pytest.raises(m2kr.M2krDataError, match=re.escape(message)):
        builder.download_and_prepare()


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
@pytest.mark.parametrize("data_dir", [m2kr.HUB_TABLES, "hf://datasets/org/m2kr-copy"])
def test_a_hub_data_dir_offline_says_so_and_to_pass_data_dir(tmp_path, monkeypatch, variable, data_dir):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1" if name == variable else "0")
    monkeypatch.setattr(m2kr.datasets.config, "HF_HUB_OFFLINE", False)
    builder = m2kr.M2kr(config_name="challenge_answers", data_dir=data_dir, cache_dir=str(tmp_path))
    message = (
        f"data_dir {data_dir} is on the Hub, but the Hub is offline here (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE is "
        "set); pass data_dir= (--data-dir) a local folder laid out like the Hub repos (<config>/train-*.parquet, "
        "and the archives in images/ or beside them)."
    )
    with pytest.raises(m2kr.M2krDataError, match=f"^{re.escape(message)}$"):
        builder.download_and_prepare()


def test_an_unreachable_hub_says_to_pass_data_dir(tmp_path, monkeypatch):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "0")
    monkeypatch.setattr(m2kr.datasets.config, "HF_HUB_OFFLINE", False)

    def unreachable(*args, **kwargs):
        raise ConnectionError("[Errno 111] Connection refused")

    monkeypatch.setattr(m2kr.fsspec.core, "url_to_fs", unreachable)
    with pytest.raises(
        m2kr.M2krDataError,
        match=re.escape(
            "but the Hub cannot be reached (ConnectionError: [Errno 111] Connection refused); pass data_dir="
        ),
    ):
        m2kr.list_tables(m2kr.HUB_TABLES, "challenge_data")


# --- stale caches ---------------------------------------------------------------------------------------------------


def _answer_count(data_dir, tmp_path):
    builder = m2kr.M2kr(config_name="challenge_answers", data_dir=str(data_dir), cache_dir=str(tmp_path / "c"))
    builder.download_and_prepare()
    return builder.as_dataset(split="train").num_rows


def test_builder_used_directly_notices_an_edit(data_dir, tmp_path):
    assert _answer_count(data_dir, tmp_path) == 30
    write_rows(data_dir, "challenge_answers", source_rows("challenge_answers")[:29])
    assert _answer_count(data_dir, tmp_path) == 29
    rows = source_rows("challenge_answers")
    rows[3]["pos_item_ids"] = ["nope"]
    write_rows(data_dir, "challenge_answers", rows)
    with pytest.raises(m2kr.M2krDataError, match="positives not in challenge_passage.passage_id"):
        _answer_count(data_dir, tmp_path)


def test_an_edit_with_the_mtime_restored_is_noticed(data_dir, tmp_path):
    path = data_dir / "challenge_answers" / FILE
    before = os.stat(path)
    rows = source_rows("challenge_answers")
    assert _answer_count(data_dir, tmp_path) == 30
    write_rows(data_dir, "challenge_answers", rows[:29])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _answer_count(data_dir, tmp_path) == 29


def _write_plain(data_dir, rows):
    """Uncompressed, without dictionaries or statistics: a same-length value keeps the file's size."""
    table = pa.Table.from_pylist(rows, schema=m2kr.SOURCE_SCHEMAS["challenge_answers"])
    options = {"compression": "none", "use_dictionary": False, "write_statistics": False}
    pq.write_table(table, data_dir / "challenge_answers" / FILE, **options)


def _stat_key(path) -> tuple:
    state = os.stat(path)
    return state.st_size, state.st_mtime_ns, state.st_ctime_ns, state.st_ino


def _positives(data_dir, tmp_path, question_id: str) -> list:
    answers = m2kr.load("challenge_answers", data_dir=str(data_dir), cache_dir=str(tmp_path / "c"))
    return [row["pos_item_ids"] for row in answers if row["question_id"] == question_id]


def test_an_edit_that_leaves_size_times_and_inode_alone_is_noticed(data_dir, tmp_path, ctime_follows_mtime):
    ctime_follows_mtime.append(data_dir)
    path, rows = data_dir / "challenge_answers" / FILE, source_rows("challenge_answers")
    _write_plain(data_dir, rows)
    before, stat_before = os.stat(path), _stat_key(path)
    assert _positives(data_dir, tmp_path, "4100") == [["Q5247669"]]
    rows[0]["pos_item_ids"] = ["Q8839601"]  # another passage, an id of the same length
    _write_plain(data_dir, rows)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _stat_key(path) == stat_before  # nothing a key on metadata would see
    assert _positives(data_dir, tmp_path, "4100") == [["Q8839601"]]


def test_an_unchanged_folder_hits_the_cache_even_when_touched(data_dir, tmp_path, monkeypatch):
    prepared = []
    split_generators = m2kr.M2kr._split_generators
    monkeypatch.setattr(
        m2kr.M2kr, "_split_generators", lambda self, dl: prepared.append(self.config.name) or split_generators(self, dl)
    )
    assert _positives(data_dir, tmp_path, "4100") == [["Q5247669"]]
    os.utime(data_dir / "challenge_answers" / FILE)  # new times, same bytes
    assert _positives(data_dir, tmp_path, "4100") == [["Q5247669"]]
    assert prepared == ["challenge_answers"]  # prepared once: the second load read datasets' cache


def test_a_damaged_entry_is_rebuilt(data_dir, tmp_path):
    assert _positives(data_dir, tmp_path, "4100") == [["Q5247669"]]
    (arrow,) = (tmp_path / "c").rglob("*.arrow")
    arrow.write_bytes(arrow.read_bytes()[:-100])
    assert _positives(data_dir, tmp_path, "4100") == [["Q5247669"]]
    size, digest = json.loads((arrow.parent / "entry.json").read_text())["files"][arrow.name]
    assert arrow.stat().st_size == size and mmr_cache.content_hash(arrow) == digest


def test_moving_the_archives_changes_the_cache_key(data_dir):
    before = m2kr.cache_hash(str(data_dir))
    _move_archives(data_dir, data_dir / "images")
    assert m2kr.cache_hash(str(data_dir)) != before


COUNT_36 = """
import sys
from datasets import load_dataset
try:
    print(load_dataset(sys.argv[1], "challenge_answers", data_dir=sys.argv[2], split="train",
                       trust_remote_code=True).num_rows)
except Exception as err:
    print(type(err).__name__, err)
"""


@pytest.mark.slow
@needs_datasets36
def test_datasets36_script_notices_edits(data_dir, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)

    def count():
        result = run_datasets36(COUNT_36, m2kr.__file__, data_dir, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.strip().splitlines()[-1], result.stderr

    assert count()[0] == "30"
    rows = source_rows("challenge_answers")
    write_rows(data_dir, "challenge_answers", rows[:29])
    assert count()[0] == "29"
    rows[3]["pos_item_ids"] = ["nope"]
    write_rows(data_dir, "challenge_answers", rows)
    out, stderr = count()
    assert out.startswith("M2krDataError ") and "positives not in challenge_passage.passage_id" in out
    assert "Repo card metadata block was not found" not in stderr  # the README beside the script is not a card


OFFLINE_36 = """
import sys
from datasets import load_dataset
try:
    load_dataset(sys.argv[1], "challenge_answers", split="train", trust_remote_code=True)
except Exception as err:
    print(type(err).__name__, err)
"""


@needs_datasets36
def test_datasets36_script_offline_without_data_dir_says_to_pass_data_dir(tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    result = run_datasets36(OFFLINE_36, m2kr.__file__, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout.strip().splitlines()[-1]
    assert out.startswith("M2krDataError No data_dir given") and "pass data_dir= a local folder" in out


@pytest.mark.parametrize("parts", [[b"", b"", b""], [b"PK", b"", b""], [zip_bytes([]), b"", b""]])
def test_an_empty_or_cut_passage_archive_is_one_line_naming_it(data_dir, tmp_path, parts):
    for name, data in zip(PASSAGE_PARTS, parts):
        (data_dir / name).write_bytes(data)
    with pytest.raises(m2kr.M2krDataError) as error:
        m2kr.load("challenge_passage", data_dir=str(data_dir), cache_dir=str(tmp_path / "cache"))
    assert str(error.value) == (
        f"{label(data_dir)}: {sum(map(len, parts)):,} bytes in all, too short for a zip archive holding any file "
        "(the download is empty or cut short): download it again."
    )


@pytest.mark.parametrize("data", [b"", zip_bytes([])])
def test_an_empty_query_archive_is_one_line_naming_it(data_dir, tmp_path, data):
    (data_dir / "query_images.zip").write_bytes(data)
    with pytest.raises(m2kr.M2krDataError) as error:
        m2kr.load("challenge_data", data_dir=str(data_dir), cache_dir=str(tmp_path / "cache"))
    assert str(error.value) == (
        f"{data_dir / 'query_images.zip'}: {len(data)} bytes, too short for a zip archive holding any file (the "
        "download is empty or cut short): download it again."
    )
