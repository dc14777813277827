"""What scoring needs of a benchmark, read from its tables alone: no images, no archives, no ``datasets``.

MIPR: the annotation JSON Lines, the corpus' ``item_id`` and ``treecate_full_path``, the queries' ``idx``.
M2KR: the id columns of the three Parquet tables, and ``question`` for the task split.

The checks here are vectorised and only decide *whether* the tables are valid. When one fails, the benchmark's
builder validates the same files (importing ``datasets``, seconds, on this error path only), so a user sees
exactly the builder's error naming the file, the line or id, and what was expected.
"""

from dataclasses import dataclass
from dataclasses import field
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as paj

from mmrhub import pandas_free
from mmrhub import truth_cache
from mmrhub.groups import mipr_main_categories
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.metrics.mipr import mipr_measures

_STRING = pa.string()
MIPR_SCHEMAS = {
    "mipr_annotation.jsonl": pa.schema(
        [("idx", _STRING), ("items", pa.list_(pa.struct([("item_id", _STRING), ("final_grade", _STRING)])))]
    ),
    "mipr_query.jsonl": pa.schema([("idx", _STRING)]),
    "mipr_corpus.jsonl": pa.schema([("item_id", _STRING), ("treecate_full_path", _STRING)]),
}
M2KR_COLUMNS = {
    "challenge_answers": ["question_id", "pos_item_ids"],
    "challenge_data": ["question_id", "question"],
    "challenge_passage": ["passage_id"],
}
M2KR_TASKS = ("image-to-document", "image+text-to-document")  # no question / a question


class TruthError(ValueError):
    """The tables are invalid, but the builder found nothing wrong: a check here disagrees with the builder's."""


@dataclass
class Truth:
    """The judged queries (rows of ``judgments``, in order), the corpus ids, and what the user should know."""

    query_ids: pa.Array
    corpus_ids: pa.Array
    judgments: object  # mipr_measures.Qrels or m2kr_measures.Positives
    groups: Callable[[], list]  # each judged query's group for the per-group means (computed when asked)
    unjudged_query_ids: pa.Array  # queries of the benchmark without judgments: a run may list them, unscored
    notes: list = field(default_factory=list)


def _all_valid(*arrays) -> bool:
    """No nulls, and valid UTF-8 (the JSON reader passes invalid bytes through)."""
    try:
        for array in arrays:
            array.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return not any(array.null_count for array in arrays)


def _unique(array) -> bool:
    return pc.count_distinct(array).as_py() == len(array)


def _columns(table: pa.Table) -> dict:
    """Column name -> one contiguous pa.Array (a ChunkedArray's to_numpy would import pandas, half a second)."""
    return {name: table[name].combine_chunks() for name in table.column_names}


def _existing_folder(data_dir) -> Path:
    folder = Path(data_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"data folder {folder} does not exist or is not a folder: check --data-dir.")
    return folder


def _read_jsonl(path: Path, schema: pa.Schema):
    """The columns, or None when pyarrow cannot read them with this schema (the builder then names the problem)."""
    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        return _columns(paj.read_json(path, read_options=paj.ReadOptions(block_size=1 << 24), parse_options=options))
    except pa.ArrowInvalid:
        return None


def _builder_error(build, where: str):
    """Run the builder on the same files; it raises its own named error. If it does not, say what we found."""
    pandas_free.unblock()  # the builders import datasets, which needs pandas
    import datasets

    # the configs that pass would print progress bars before the error, which must stay one line
    were_disabled = datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        build()
    finally:
        if not were_disabled:
            datasets.enable_progress_bars()
    raise TruthError(
        f"{where}: the scoring tables failed a check that the builder passed; please report this with the files."
    )


def _validated(folder: Path, kind: str, sources, read, valid, build, derive=lambda tables: tables) -> dict:
    """The tables ``read()`` gives once ``valid`` passes them (else the builder's error), with what ``derive``
    adds to them, kept between processes."""
    key = truth_cache.source_key(kind, sources)
    tables = truth_cache.load(key)
    if tables is None:
        tables = read()
        if not valid(tables):
            _builder_error(build, str(folder))
        tables = derive(tables)
        truth_cache.save(key, tables)
    return tables


def read_mipr(data_dir) -> Truth:
    folder = _existing_folder(data_dir)
    for name in MIPR_SCHEMAS:
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name} is missing or not a file: the data folder must hold the official "
                                    f"MIPR files ({', '.join(MIPR_SCHEMAS)}).")

    def build():
        import mipr

        for config in ("queries", "corpus", "qrels"):
            mipr.load(config, data_dir=str(folder), check_images=False)

    def read():
        return {name: _read_jsonl(folder / name, schema) for name, schema in MIPR_SCHEMAS.items()}

    def prepared(tables):  # judgments as the metric indexes them: ids coded against the corpus, in code order per query
        annotation, corpus = tables["mipr_annotation.jsonl"], tables["mipr_corpus.jsonl"]
        items = annotation["items"]
        codes = pc.index_in(pc.struct_field(items.values, [0]), value_set=corpus["item_id"]).to_numpy()
        rows = pc.list_parent_indices(items).to_numpy()
        order = pa.array(np.lexsort((codes, rows)))
        codes = pa.array(codes, pa.int32()).take(order)
        paths = pc.dictionary_encode(corpus["treecate_full_path"])
        columns = {
            "item_ids": pa.DictionaryArray.from_arrays(codes, corpus["item_id"]),
            "grades": pc.dictionary_encode(pc.struct_field(items.values, [1]).take(order)),
            "categories": pa.DictionaryArray.from_arrays(paths.indices.take(codes), paths.dictionary),
        }
        lists = {name: pa.ListArray.from_arrays(items.offsets, values) for name, values in columns.items()}
        return {"mipr_query.jsonl": tables["mipr_query.jsonl"], "mipr_corpus.jsonl": {"item_id": corpus["item_id"]},
                "judgments": {"idx": annotation["idx"], **lists}}

    sources = [folder / name for name in MIPR_SCHEMAS]
    tables = _validated(folder, "mipr", sources, read, _mipr_valid, build, prepared)
    queries, corpus, judged = tables["mipr_query.jsonl"], tables["mipr_corpus.jsonl"], tables["judgments"]
    query_ids = judged["idx"]
    judgments = mipr_measures.Qrels(judged["item_ids"], judged["grades"], judged["categories"],
                                    query_ids=query_ids.to_pylist())
    unjudged = pc.filter(queries["idx"], pc.invert(pc.is_in(queries["idx"], value_set=query_ids)))
    notes = _coverage_notes(folder / "mipr_query.jsonl", len(unjudged), pc.list_value_length(judged["item_ids"]), query_ids)
    return Truth(query_ids, corpus["item_id"], judgments, partial(mipr_main_categories, judgments), unjudged, notes)


def _mipr_valid(tables) -> bool:
    if any(table is None for table in tables.values()):
        return False
    qrels, queries, corpus = tables["mipr_annotation.jsonl"], tables["mipr_query.jsonl"], tables["mipr_corpus.jsonl"]
    items = qrels["items"].values
    item_ids, grades = pc.struct_field(items, [0]), pc.struct_field(items, [1])
    columns = [qrels["idx"], items, item_ids, grades, queries["idx"], corpus["item_id"], corpus["treecate_full_path"]]
    if not (_all_valid(*columns) and _unique(qrels["idx"]) and _unique(queries["idx"]) and _unique(corpus["item_id"])):
        return False
    codes = pc.index_in(item_ids, value_set=corpus["item_id"])
    if codes.null_count or not pc.all(pc.is_in(qrels["idx"], value_set=queries["idx"])).as_py():
        return False
    if not pc.all(pc.is_in(grades, value_set=pa.array(list(mipr_measures.GAINS)))).as_py():
        return False
    # no product judged twice for one query: (query, product) pairs as distinct integers
    pairs = np.sort(pc.list_parent_indices(qrels["items"]).to_numpy() * len(corpus["item_id"]) + codes.to_numpy())
    return not (pairs[1:] == pairs[:-1]).any()


def read_m2kr(data_dir) -> Truth:
    folder = _existing_folder(data_dir)

    def build():
        import m2kr

        m2kr.load("challenge_answers", data_dir=str(folder), check_images=False)

    def read():
        return {config: _read_parquet(folder, config, columns) for config, columns in M2KR_COLUMNS.items()}

    sources = [path for config in M2KR_COLUMNS for path in _parquet_files(folder, config)]
    tables = _validated(folder, "m2kr", sources, read, _m2kr_valid, build)
    answers, questions, passages = tables["challenge_answers"], tables["challenge_data"], tables["challenge_passage"]
    query_ids = answers["question_id"]
    rows = pc.index_in(query_ids, value_set=questions["question_id"])
    has_question = pc.not_equal(pc.fill_null(questions["question"], ""), "").take(rows)
    tasks = np.where(has_question.to_numpy(zero_copy_only=False), M2KR_TASKS[1], M2KR_TASKS[0]).tolist()
    judgments = m2kr_measures.Positives(answers["pos_item_ids"], query_ids=query_ids.to_pylist())
    unjudged = pc.filter(questions["question_id"], pc.invert(pc.is_in(questions["question_id"], value_set=query_ids)))
    notes = _coverage_notes(folder / "challenge_data", len(unjudged), pc.list_value_length(answers["pos_item_ids"]), query_ids)
    return Truth(query_ids, passages["passage_id"], judgments, lambda: tasks, unjudged, notes)


def _parquet_files(folder: Path, config: str) -> list:
    files = sorted((folder / config).glob("train-*.parquet"))
    if not files:
        raise FileNotFoundError(f"No {config}/train-*.parquet under {folder}: --data-dir must hold the M2KR tables.")
    return files


def _read_parquet(folder: Path, config: str, columns):
    """The named columns of ``<config>/train-*.parquet``, or None when they cannot be read as such."""
    import pyarrow.parquet as pq  # here: only M2KR reads Parquet, and the import costs MIPR's scoring 25 ms

    try:
        return _columns(pa.concat_tables(pq.read_table(path, columns=columns) for path in _parquet_files(folder, config)))
    except (pa.ArrowInvalid, KeyError, OSError):
        return None


def _m2kr_valid(tables) -> bool:
    if any(table is None for table in tables.values()):
        return False
    answers, questions, passages = tables["challenge_answers"], tables["challenge_data"], tables["challenge_passage"]
    positives = answers["pos_item_ids"]
    if not pa.types.is_list(positives.type) or not pa.types.is_string(positives.type.value_type):
        return False
    ids = [answers["question_id"], questions["question_id"], passages["passage_id"]]
    if not (_all_valid(*ids, positives, positives.values) and all(map(_unique, ids))):
        return False
    if not pc.all(pc.greater(pc.list_value_length(positives), 0)).as_py():
        return False
    known_queries = pc.is_in(answers["question_id"], value_set=questions["question_id"])
    known_passages = pc.is_in(positives.values, value_set=passages["passage_id"])
    return pc.all(known_queries).as_py() and pc.all(known_passages).as_py()


def _coverage_notes(queries_source, num_unjudged: int, list_lengths, query_ids) -> list:
    """Judgments that change what the means are over, said with counts rather than silently."""
    notes = []
    if num_unjudged:
        notes.append(
            f"{num_unjudged} queries of {queries_source} have no judgment row: they are left out of every mean."
        )
    empty = int((list_lengths.to_numpy() == 0).sum())
    if empty:
        notes.append(f"{empty} judged queries have an empty judgment list: they score 0 and stay in the means.")
    return notes
