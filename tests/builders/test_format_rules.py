"""The builder and scoring state each format's rules once (mipr_format, m2kr_format): fed the same hostile tables,
both accept (and score the same) or both refuse with the same message naming the file and the line or row."""

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _m2kr_helpers import TABLE_FILE
from _mipr_helpers import edit_jsonl

import m2kr
import mipr
from mmrhub.benchmarks.m2kr import read_truth as m2kr_truth
from mmrhub.benchmarks.mipr import read_truth as mipr_truth
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.metrics.mipr import mipr_measures


def verdict(call):
    """("accepted", result), or (error class name, message) for a refusal."""
    try:
        return "accepted", call()
    except ValueError as err:
        return type(err).__name__, str(err)


# --- MIPR -----------------------------------------------------------------------------------------------------------


def mipr_build(data_dir, cache):
    """What the builder makes of the folder: its three configs, the image folders unchecked (scoring's view)."""
    return {
        config: mipr.load(config, data_dir=str(data_dir), cache_dir=str(cache), check_images=False)
        for config in ("queries", "corpus", "qrels")
    }


def edit_rows(name, edit):
    """A case: ``edit(rows)`` applied to the JSON Lines file ``name``; returns the file's path."""

    def case(data_dir):
        edit_jsonl(data_dir / name, edit)
        return data_dir / name

    return case


def set_field(name, row, field, value):
    return edit_rows(name, lambda rows: rows[row].update({field: value}))


def replace_bytes(name, old: bytes, new: bytes):
    """A case: the first ``old`` of the file replaced by ``new`` (bytes no JSON writer would produce)."""

    def case(data_dir):
        path = data_dir / name
        data = path.read_bytes()
        path.write_bytes(data.replace(old, new, 1))
        return path

    return case


def empty_items(rows):
    for row in rows:
        row["items"] = []


MIPR_CASES = {
    "every judgment list empty": edit_rows("mipr_annotation.jsonl", empty_items),
    "integer title": set_field("mipr_corpus.jsonl", 4, "title", 5),
    "invalid UTF-8 in a title": replace_bytes("mipr_corpus.jsonl", b'"title": "', b'"title": "\xff'),
    "null query": set_field("mipr_query.jsonl", 2, "query", None),
    "null image name": set_field("mipr_query.jsonl", 5, "image_url", None),
    "image name leaving its folder": set_field("mipr_corpus.jsonl", 7, "pict_url", "../x.jpg"),
    "null category": set_field("mipr_corpus.jsonl", 3, "treecate_full_path", None),
    "duplicate query id": set_field("mipr_query.jsonl", 6, "idx", "1"),
    "lone surrogate": replace_bytes("mipr_query.jsonl", b'"query": "', b'"query": "\\ud800'),
    "unknown grade": edit_rows("mipr_annotation.jsonl", lambda rows: rows[2]["items"][0].update(final_grade="L9")),
    "judged product not in the corpus": edit_rows(
        "mipr_annotation.jsonl", lambda rows: rows[1]["items"][0].update(item_id="x")
    ),
}

MIPR_ACCEPTED = {"every judgment list empty"}


@pytest.mark.parametrize("case", MIPR_CASES)
def test_mipr_builder_and_scoring_agree(case, tmp_path):
    data_dir = shutil.copytree(mipr.SAMPLE_DIR, tmp_path / "mipr")
    path = MIPR_CASES[case](data_dir)
    built, scored = verdict(lambda: mipr_build(data_dir, tmp_path / "cache")), verdict(lambda: mipr_truth(data_dir))
    assert (built[0] == "accepted") == (case in MIPR_ACCEPTED), built[1]
    if built[0] != "accepted" or scored[0] != "accepted":
        assert scored == built
        assert built[0] == "MiprDataError" and str(path) in built[1]
        return
    datasets, truth = built[1], scored[1]
    qrels = datasets["qrels"]
    assert truth.query_ids.to_pylist() == qrels["idx"]
    assert truth.corpus_ids.to_pylist() == datasets["corpus"]["item_id"]
    category = dict(zip(datasets["corpus"]["item_id"], datasets["corpus"]["treecate_full_path"]))
    references = [[item["item_id"] for item in items] for items in qrels["items"]]
    grades = [[item["final_grade"] for item in items] for items in qrels["items"]]
    categories = [[category[item] for item in items] for items in references]
    from_builder = mipr_measures.Qrels(references, grades, categories, query_ids=qrels["idx"])
    rankings = [list(reversed(items)) + datasets["corpus"]["item_id"][:5] for items in references]
    rankings = [list(dict.fromkeys(ranking)) for ranking in rankings]
    assert mipr_measures.evaluate_run(truth.judgments, rankings) == mipr_measures.evaluate_run(from_builder, rankings)


# --- M2KR -----------------------------------------------------------------------------------------------------------


def m2kr_build(data_dir, cache):
    """What the builder makes of the folder: its three configs, no archive read (scoring's view)."""
    return {
        config: m2kr.load(config, data_dir=str(data_dir), cache_dir=str(cache), check_images=False)
        for config in m2kr.CONFIG_NAMES
    }


def retype(config, columns: dict):
    """Rewrite columns with other Arrow types, as polars (large), pandas (categorical) or other writers do."""

    def edit(data_dir):
        path = data_dir / config / TABLE_FILE
        table = pq.read_table(path)
        for column, type_ in columns.items():
            at = table.schema.get_field_index(column)
            table = table.set_column(at, pa.field(column, type_), table[column].cast(type_))
        pq.write_table(table, path)

    return edit


def set_value(config, row, column, value, type_=None):
    def edit(data_dir):
        path = data_dir / config / TABLE_FILE
        table = pq.read_table(path)
        values = table[column].to_pylist()
        values[row] = value
        at = table.schema.get_field_index(column)
        type_here = type_ or table.schema.field(column).type
        pq.write_table(table.set_column(at, pa.field(column, type_here), pa.array(values, type_here)), path)

    return edit


LARGE = {"question_id": pa.large_string(), "pos_item_ids": pa.large_list(pa.large_string())}
M2KR_CASES = {
    "large types (polars)": [
        retype("challenge_answers", LARGE),
        retype("challenge_passage", {"passage_id": pa.large_string(), "passage_content": pa.large_string()}),
    ],
    "dictionary ids (pandas categorical)": [
        retype("challenge_passage", {"passage_id": pa.dictionary(pa.int32(), pa.string())})
    ],
    "string_view ids": [retype("challenge_answers", {"question_id": pa.string_view()})],
    "int64 question ids": [
        retype("challenge_answers", {"question_id": pa.int64()}),
        retype("challenge_data", {"question_id": pa.int64()}),
    ],
    "null screenshot": [set_value("challenge_passage", 4, "page_screenshot", None)],
    "null instruction": [set_value("challenge_data", 2, "instruction", None)],
    "null passage id": [set_value("challenge_passage", 3, "passage_id", None)],
    "positives as one string": [retype("challenge_answers", {"pos_item_ids": pa.string()})],
    "empty positive list": [set_value("challenge_answers", 5, "pos_item_ids", [])],
    "unknown positive": [set_value("challenge_answers", 6, "pos_item_ids", ["nope"])],
    "duplicate question id": [set_value("challenge_data", 7, "question_id", "4100")],
}


def _positives_as_text(data_dir):
    """pyarrow cannot cast a list to a string: write the joined ids as a plain string column."""
    path = data_dir / "challenge_answers" / TABLE_FILE
    table = pq.read_table(path)
    joined = [",".join(ids) for ids in table["pos_item_ids"].to_pylist()]
    pq.write_table(table.set_column(1, "pos_item_ids", pa.array(joined)), path)


M2KR_CASES["positives as one string"] = [_positives_as_text]

M2KR_ACCEPTED = {"large types (polars)", "dictionary ids (pandas categorical)", "string_view ids", "int64 question ids"}


@pytest.mark.parametrize("case", M2KR_CASES)
def test_m2kr_builder_and_scoring_agree(case, tmp_path):
    data_dir = shutil.copytree(m2kr.SAMPLE_DIR, tmp_path / "m2kr", ignore=shutil.ignore_patterns("*.zip*", "baseline"))
    for edit in M2KR_CASES[case]:
        edit(data_dir)
    built, scored = verdict(lambda: m2kr_build(data_dir, tmp_path / "cache")), verdict(lambda: m2kr_truth(data_dir))
    assert (built[0] == "accepted") == (case in M2KR_ACCEPTED), built[1]
    if built[0] != "accepted" or scored[0] != "accepted":
        assert scored == built
        assert built[0] == "M2krDataError" and f"/{TABLE_FILE}" in built[1]
        return
    datasets, truth = built[1], scored[1]
    answers, questions = datasets["challenge_answers"], datasets["challenge_data"]
    assert truth.query_ids.to_pylist() == answers["question_id"]
    assert truth.corpus_ids.to_pylist() == datasets["challenge_passage"]["passage_id"]
    task = dict(zip(questions["question_id"], questions["task"]))
    assert truth.groups() == [task[qid] for qid in answers["question_id"]]
    from_builder = m2kr_measures.Positives(answers["pos_item_ids"], query_ids=answers["question_id"])
    rankings = [list(reversed(ids)) for ids in answers["pos_item_ids"]]
    rankings[0] = datasets["challenge_passage"]["passage_id"][:5]
    assert m2kr_measures.evaluate_run(truth.judgments, rankings) == m2kr_measures.evaluate_run(from_builder, rankings)
