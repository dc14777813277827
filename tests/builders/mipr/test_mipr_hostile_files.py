"""Hostile MIPR input: undecodable text, images that are not what they claim, odd paths, stale caches.

Every refusal happens at preparation and names the file and the line (1-based) or the image file.
"""

import errno
import json
import os
import re
from pathlib import Path

import datasets
import pytest
from _datasets36 import needs_datasets36
from _datasets36 import run_datasets36
from _mipr_helpers import copy_sample
from _mipr_helpers import edit_jsonl
from _mipr_helpers import expect
from _mipr_helpers import prepare
from _mipr_helpers import read_jsonl

import mipr


def replace_line(path, number, line: bytes):
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = line
    path.write_bytes(b"".join(lines))


# --- undecodable text -------------------------------------------------------------------------------------------


def test_gbk_encoded_corpus_is_refused_at_its_first_line(data_dir):
    path = data_dir / "mipr_corpus.jsonl"
    path.write_bytes(path.read_text(encoding="utf-8").encode("gbk"))
    expect("corpus", data_dir, f"{path}: line 1, byte offset ")
    expect("corpus", data_dir, "is not valid UTF-8; expected UTF-8 text (or UTF-16 with a byte-order mark).")


def test_one_latin1_byte_in_a_title_names_its_line_and_byte_offset(data_dir):
    path = data_dir / "mipr_corpus.jsonl"
    row = read_jsonl(path)[41]
    line = json.dumps({**row, "title": "caf"}, ensure_ascii=False).encode().replace(b'"caf"', b'"caf\xe9"')
    replace_line(path, 42, line + b"\n")
    offset = len(b"".join(path.read_bytes().splitlines(keepends=True)[:41])) + line.index(b"\xe9")
    expect("corpus", data_dir, f"{path}: line 42, byte offset {offset}: 0xe9 is not valid UTF-8;")


def test_lone_surrogate_escape_is_refused(data_dir):
    path = data_dir / "mipr_query.jsonl"
    replace_line(path, 3, b'{"idx": "3", "query": "bad \\ud800 text", "image_url": "2.jpg"}\n')
    expect("queries", data_dir, f"{path} line 3: the escape \\ud800 is a lone surrogate, not a character.")


def test_lone_surrogate_in_a_judged_item_id_is_refused(data_dir):
    path = data_dir / "mipr_annotation.jsonl"
    replace_line(path, 2, b'{"idx": "2", "items": [{"item_id": "\\udfff", "final_grade": "L1"}]}\n')
    expect("qrels", data_dir, f"{path} line 2: the escape \\udfff is a lone surrogate, not a character.")


def test_a_utf8_byte_order_mark_is_accepted(data_dir):
    path = data_dir / "mipr_query.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    queries = prepare("queries", data_dir)
    assert queries.num_rows == 27 and queries[0]["idx"] == "1"


def test_line_numbers_after_a_byte_order_mark_stay_1_based(data_dir):
    path = data_dir / "mipr_query.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    replace_line(path, 1, b'\xef\xbb\xbf{"idx": 1, "query": "q", "image_url": "1.jpg"}\n')
    expect("queries", data_dir, f'{path} line 1: field "idx" must be a string, got int 1.')


def test_lines_over_one_mebibyte_are_read(data_dir):
    long_title = "长" * 600_000  # 1.8 MB of UTF-8 on one line
    edit_jsonl(data_dir / "mipr_corpus.jsonl", lambda rows: rows[100].update(title=long_title))
    corpus = prepare("corpus", data_dir)
    assert corpus.num_rows == 254 and corpus[100]["title"] == long_title


def test_an_error_after_a_long_line_names_its_line(data_dir):
    def edit(rows):
        rows[100]["title"] = "长" * 600_000
        rows[200]["title"] = 5

    edit_jsonl(data_dir / "mipr_corpus.jsonl", edit)
    expect("corpus", data_dir, 'line 201: field "title" must be a string, got int 5.')


# --- images -----------------------------------------------------------------------------------------------------


def test_image_symlink_leading_outside_the_data_folder_is_refused(data_dir):
    image = data_dir / "images" / "product_images" / "7ab0ab84666fa41b.jpg"
    image.unlink()
    image.symlink_to("/etc/passwd")
    expect("corpus", data_dir, f"image file {image} is a symbolic link to /etc/passwd, outside the data folder")


def test_image_symlink_inside_the_data_folder_is_accepted(data_dir):
    folder = data_dir / "images" / "product_images"
    image = folder / "7ab0ab84666fa41b.jpg"
    other = sorted(folder.iterdir())[-1]
    image.unlink()
    image.symlink_to(other)
    assert prepare("corpus", data_dir)[0]["image"].size == (48, 48)


def test_empty_image_is_refused(data_dir):
    image = data_dir / "images" / "query_images" / "12.jpg"
    image.write_bytes(b"")
    expect("queries", data_dir, f"mipr_query.jsonl: image file {image} is empty (0 bytes); expected a non-empty file.")


def test_check_images_false_skips_the_image_checks(data_dir):
    (data_dir / "images" / "query_images" / "12.jpg").write_bytes(b"")
    (data_dir / "images" / "query_images" / "1.jpg").unlink()
    assert prepare("queries", data_dir, check_images=False).num_rows == 27


def test_image_checks_open_no_image(data_dir, monkeypatch):
    opened = []
    real_open = open

    def recording(file, *args, **kwargs):
        if str(file).endswith(".jpg"):
            opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", recording)
    assert prepare("corpus", data_dir).num_rows == 254
    assert opened == []


# --- paths ------------------------------------------------------------------------------------------------------


def test_a_data_folder_with_a_chain_separator_is_refused(tmp_path):
    data_dir = copy_sample(tmp_path / "a::b")
    with pytest.raises(mipr.MiprDataError, match=re.escape(f"data_dir {data_dir}: a local path must not contain '::'")):
        prepare("queries", data_dir)


def test_a_data_folder_with_a_pipe_works(tmp_path):
    data_dir = copy_sample(tmp_path / "a|b")
    assert prepare("queries", data_dir)[0]["image"].size == (48, 48)


# --- a full disk and the Hub offline ----------------------------------------------------------------------------


def test_a_full_cache_disk_names_the_cache_folder(data_dir, monkeypatch):
    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(datasets.arrow_writer.ArrowWriter, "write_table", full)
    message = (
        f"[Errno 28] No space left in the datasets cache {data_dir.parent / 'cache'} (No space left on device) while "
        "writing qrels: free space there, or point HF_DATASETS_CACHE (or cache_dir=) at a folder on a disk with room."
    )
    with pytest.raises(OSError, match=f"^{re.escape(message)}$"):
        prepare("qrels", data_dir)


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
def test_a_hub_data_dir_offline_says_so_and_to_pass_data_dir(tmp_path, monkeypatch, variable):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1" if name == variable else "0")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    message = (
        "data_dir hf://datasets/org/mipr is on the Hub, but the Hub is offline here (HF_HUB_OFFLINE or "
        "HF_DATASETS_OFFLINE is set); pass data_dir= (--data-dir) a local folder holding mipr_query.jsonl, "
        "mipr_corpus.jsonl, mipr_annotation.jsonl and images/."
    )
    with pytest.raises(mipr.MiprDataError, match=f"^{re.escape(message)}$"):
        mipr.load("qrels", data_dir="hf://datasets/org/mipr", cache_dir=str(tmp_path))


# --- stale caches -----------------------------------------------------------------------------------------------


def _builder_rows(data_dir, cache_dir):
    builder = mipr.Mipr(config_name="qrels", data_dir=str(data_dir), cache_dir=str(cache_dir))
    builder.download_and_prepare()
    return builder.as_dataset(split="test")


def test_builder_used_directly_notices_an_edit(data_dir, tmp_path):
    assert _builder_rows(data_dir, tmp_path / "c")[7]["items"][4]["final_grade"] != "N2"
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade="N2"))
    assert _builder_rows(data_dir, tmp_path / "c")[7]["items"][4]["final_grade"] == "N2"


def test_builder_used_directly_refuses_an_invalid_edit(data_dir, tmp_path):
    _builder_rows(data_dir, tmp_path / "c")
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade="L3"))
    with pytest.raises(mipr.MiprDataError, match='idx "8" items\\[5\\]: unknown final_grade "L3"'):
        _builder_rows(data_dir, tmp_path / "c")


def test_an_edit_with_the_mtime_restored_is_noticed(data_dir, tmp_path):
    path = data_dir / "mipr_query.jsonl"
    before = os.stat(path)
    assert prepare("queries", data_dir)[0]["query"] == "表面的老垢用啥清洗剂除"
    edit_jsonl(path, lambda rows: rows[0].update(query="表面的老垢用啥清洗剂洗"))  # same length in bytes
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert prepare("queries", data_dir)[0]["query"] == "表面的老垢用啥清洗剂洗"


def _grade_count(data_dir, grade: str) -> int:
    qrels = prepare("qrels", data_dir)
    return sum(item["final_grade"] == grade for row in qrels for item in row["items"])


def _stat_key(path) -> tuple:
    state = os.stat(path)
    return state.st_size, state.st_mtime_ns, state.st_ctime_ns, state.st_ino


def test_an_edit_that_leaves_size_times_and_inode_alone_is_noticed(data_dir, ctime_follows_mtime):
    ctime_follows_mtime.append(data_dir)
    path = data_dir / "mipr_annotation.jsonl"
    before, stat_before = os.stat(path), _stat_key(path)
    assert _grade_count(data_dir, "L1") == 74
    path.write_bytes(path.read_bytes().replace(b'"N2"', b'"L1"'))  # 27 N2 judgments become L1, same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _stat_key(path) == stat_before  # nothing a key on metadata would see
    assert _grade_count(data_dir, "L1") == 101


def test_an_unchanged_folder_hits_the_cache_even_when_touched(data_dir, monkeypatch):
    prepared = []
    split_generators = mipr.Mipr._split_generators
    monkeypatch.setattr(
        mipr.Mipr, "_split_generators", lambda self, dl: prepared.append(self.config.name) or split_generators(self, dl)
    )
    assert _grade_count(data_dir, "L1") == 74
    assert prepared == ["qrels"]
    assert _grade_count(data_dir, "L1") == 74
    os.utime(data_dir / "mipr_annotation.jsonl")  # new times, same bytes
    assert _grade_count(data_dir, "L1") == 74
    assert prepared == ["qrels"]  # prepared once: the later loads read datasets' cache


def _entry(data_dir) -> Path:
    """The one cache entry under ``prepare``'s cache folder."""
    (manifest,) = (data_dir.parent / "cache").rglob("entry.json")
    return manifest.parent


@pytest.mark.parametrize("damage", ["truncated", "foreign", "no manifest"])
def test_a_damaged_or_foreign_entry_is_rebuilt(data_dir, monkeypatch, damage):
    assert _grade_count(data_dir, "L1") == 74
    entry = _entry(data_dir)
    (arrow,) = entry.glob("*.arrow")
    if damage == "truncated":
        arrow.write_bytes(arrow.read_bytes()[:-100])
    elif damage == "foreign":  # an entry written under another key, copied here
        manifest = json.loads((entry / "entry.json").read_text())
        (entry / "entry.json").write_text(json.dumps({**manifest, "key": "0123456789abcdef"}))
    else:
        (entry / "entry.json").unlink()
    prepared = []
    split_generators = mipr.Mipr._split_generators
    monkeypatch.setattr(
        mipr.Mipr, "_split_generators", lambda self, dl: prepared.append(self.config.name) or split_generators(self, dl)
    )
    assert _grade_count(data_dir, "L1") == 74
    assert prepared == ["qrels"]
    assert json.loads((entry / "entry.json").read_text())["key"] == entry.name


def test_what_datasets_writes_beside_an_entry_is_let_be(data_dir, monkeypatch):
    # Dataset.map writes its results (cache-<fingerprint>.arrow) into the entry's folder: not damage to rebuild for.
    qrels = prepare("qrels", data_dir)
    qrels.map(lambda row: {"n": len(row["items"])})
    assert [path.name for path in _entry(data_dir).glob("cache-*.arrow")]
    prepared = []
    split_generators = mipr.Mipr._split_generators
    monkeypatch.setattr(
        mipr.Mipr, "_split_generators", lambda self, dl: prepared.append(self.config.name) or split_generators(self, dl)
    )
    assert _grade_count(data_dir, "L1") == 74
    assert prepared == [] and list(_entry(data_dir).glob("cache-*.arrow"))


def test_an_arrow_file_edited_in_place_at_the_same_size_is_rebuilt(data_dir):
    # The reported case: the entry's sizes still matched, so load("qrels") served 0 L1 judgments instead of 74.
    assert _grade_count(data_dir, "L1") == 74
    (arrow,) = _entry(data_dir).glob("*.arrow")
    data = arrow.read_bytes()
    arrow.write_bytes(data.replace(b"L1", b"N1"))
    assert arrow.stat().st_size == len(data)
    assert _grade_count(data_dir, "L1") == 74
    assert b"L1" in arrow.read_bytes()


def test_the_given_hash_is_kept_in_the_key(data_dir, tmp_path):
    one = mipr.Mipr(config_name="qrels", data_dir=str(data_dir), cache_dir=str(tmp_path), hash="one")
    two = mipr.Mipr(config_name="qrels", data_dir=str(data_dir), cache_dir=str(tmp_path), hash="two")
    assert one.cache_dir != two.cache_dir


GRADE_36 = """
import sys
from datasets import load_dataset
try:
    qrels = load_dataset(sys.argv[1], "qrels", data_dir=sys.argv[2], split="test", trust_remote_code=True)
    print(qrels[7]["items"][4]["final_grade"])
except Exception as err:
    print(type(err).__name__, err)
"""


@pytest.mark.slow
@needs_datasets36
def test_datasets36_script_notices_edits(data_dir, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf")}

    def grade():
        result = run_datasets36(GRADE_36, mipr.__file__, data_dir, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Repo card metadata block was not found" not in result.stderr  # the README is not read as a card
        return result.stdout.strip().splitlines()[-1]

    original = grade()
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade="L3"))
    assert grade().startswith("MiprDataError ") and 'unknown final_grade "L3"' in grade()
    new = "N1" if original != "N1" else "N2"
    edit_jsonl(data_dir / "mipr_annotation.jsonl", lambda rows: rows[7]["items"][4].update(final_grade=new))
    assert grade() == new
