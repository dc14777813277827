"""The MTEB retrieval layout of a benchmark: ``corpus`` and ``queries`` (``id``, ``text``, ``image``) and
``qrels`` (``query-id``, ``corpus-id``, integer ``score``), built from the builders' tables."""

import pyarrow as pa
import pyarrow.compute as pc

CONFIG_NAMES = ("corpus", "queries", "qrels")
DEFAULT_CONFIG = "qrels"
QRELS_SCHEMA = pa.schema([("query-id", pa.string()), ("corpus-id", pa.string()), ("score", pa.int32())])


def _rename(dataset, columns: dict):
    """Keep ``columns`` (source name -> MTEB name), in MTEB's order."""
    return dataset.select_columns(list(columns)).rename_columns(columns)


def _qrels(query_ids: pa.ChunkedArray, lists: pa.ChunkedArray, split):
    """One qrels row per list element: ``lists`` holds, per query, structs ``(corpus-id, score)``."""
    lists = lists.combine_chunks()
    flat = pc.list_flatten(lists)
    table = pa.table(
        {
            "query-id": pc.take(query_ids.combine_chunks(), pc.list_parent_indices(lists)),
            "corpus-id": pc.struct_field(flat, [0]),
            "score": pc.struct_field(flat, [1]).cast(pa.int32()),
        }
    )
    import datasets  # here, not at the top: the benchmark declarations import this module, and scoring never builds

    return datasets.Dataset(datasets.table.InMemoryTable(table.cast(QRELS_SCHEMA)), split=split)


def mipr_tables(module, load):
    """MIPR: product title as the document text, the question as the query text, score = the grade's gain."""
    yield "corpus", _rename(load("corpus"), {"item_id": "id", "title": "text", "image": "image"})
    yield "queries", _rename(load("queries"), {"idx": "id", "query": "text", "image": "image"})
    qrels = load("qrels")
    table = qrels.with_format("arrow")[:]
    items = table["items"].combine_chunks()
    grades = pc.struct_field(items.values, [1])
    gain_of = pa.array(list(module.GAINS.values()) + [0], pa.int32())
    graded = pc.index_in(grades, value_set=pa.array(list(module.GAINS), pa.string()))
    position = pc.fill_null(graded, len(module.GAINS))
    scored = pa.ListArray.from_arrays(
        items.offsets,
        pa.StructArray.from_arrays([pc.struct_field(items.values, [0]), pc.take(gain_of, position)], ["id", "score"]),
    )
    yield "qrels", _qrels(table["idx"], pa.chunked_array([scored]), qrels.split)


def m2kr_tables(module, load):
    """M2KR: passage content and screenshot as the document, the question (may be empty) and image as the
    query, score 1 for every positive passage."""
    passages = load("challenge_passage")
    yield "corpus", _rename(passages, {"passage_id": "id", "passage_content": "text", "image": "image"})
    yield "queries", _rename(load("challenge_data"), {"question_id": "id", "question": "text", "image": "image"})
    answers = load("challenge_answers")
    table = answers.with_format("arrow")[:]
    positives = table["pos_item_ids"].combine_chunks()
    ones = pa.array([1] * len(positives.values), pa.int32())
    pairs = pa.StructArray.from_arrays([positives.values, ones], ["id", "score"])
    scored = pa.ListArray.from_arrays(positives.offsets, pairs)
    yield "qrels", _qrels(table["question_id"], pa.chunked_array([scored]), answers.split)

