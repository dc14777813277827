"""The MTEB retrieval layout of a benchmark, built from the builders' tables, in the MIEB Hub convention that both
mteb 1.x (``AbsTaskAny2AnyRetrieval``'s loader) and mteb 2 (``RetrievalDatasetLoader``) read:

- ``corpus`` (split ``corpus``) and ``query`` (split ``test``): ``id``, ``modality``, ``text``, ``image``
  (M2KR's ``query`` also keeps ``instruction``);
- ``qrels`` (split ``test``): ``query-id``, ``Q0``, ``corpus-id``, integer ``score``; MIPR adds ``qrels-l1``, its
  L1 judgments only.
"""

import pyarrow as pa
import pyarrow.compute as pc

DEFAULT_CONFIG = "qrels"
CORPUS_SPLIT = "corpus"  # mteb 1.x reads the corpus config's split of this name, whatever the evaluation split
EVAL_SPLIT = "test"  # MTEB tasks evaluate "test" by default, and mteb 1.x has no fallback (M2KR's own split is train)
MODALITY = "image,text"  # mteb 1.x encodes every row the way the first row's modality says: both, always
QRELS_SCHEMA = pa.schema(
    [("query-id", pa.string()), ("Q0", pa.string()), ("corpus-id", pa.string()), ("score", pa.int32())]
)


def _side(dataset, columns: dict, split=EVAL_SPLIT):
    """Keep ``columns`` (source name -> MTEB name) with ``modality`` after ``id``, as split ``split``."""
    import datasets  # here, not at the top: the benchmark declarations import this module, and scoring never builds

    kept = dataset.select_columns(list(columns)).rename_columns(columns)
    kept = kept.add_column("modality", [MODALITY] * len(kept))
    names = list(columns.values())
    kept = kept.select_columns(names[:1] + ["modality"] + names[1:])
    return datasets.Dataset(kept.data, info=kept.info, split=split, indices_table=kept._indices)


def _qrels(query_ids: pa.ChunkedArray, lists: pa.ChunkedArray, scores: pa.Array, keep=None):
    """One qrels row per element of ``lists`` (per query, the judged ids), scored by ``scores`` (one per element);
    ``keep``: a mask over the elements, to write only those."""
    import datasets  # here, not at the top: the benchmark declarations import this module, and scoring never builds

    lists = lists.combine_chunks()
    ids = pc.list_flatten(lists)
    table = pa.table(
        {
            "query-id": pc.take(query_ids.combine_chunks(), pc.list_parent_indices(lists)),
            "Q0": pa.array(["0"] * len(ids), pa.string()),  # TREC qrels' iteration column, which mteb 1.x drops
            "corpus-id": ids,
            "score": scores.cast(pa.int32()),
        }
    )
    if keep is not None:
        table = table.filter(keep)
    return datasets.Dataset(datasets.table.InMemoryTable(table.cast(QRELS_SCHEMA)), split=EVAL_SPLIT)


def mipr_tables(module, load):
    """MIPR: product title as the document text, the question as the query text, score = the grade's gain;
    ``qrels-l1`` keeps the L1 rows only, on which MTEB's recall and hit rate are MIPR's R-L1 and Hit-L1."""
    yield "corpus", _side(load("corpus"), {"item_id": "id", "title": "text", "image": "image"}, CORPUS_SPLIT)
    yield "query", _side(load("queries"), {"idx": "id", "query": "text", "image": "image"})
    qrels = load("qrels")
    table = qrels.with_format("arrow")[:]
    items = table["items"].combine_chunks()
    ids = pa.ListArray.from_arrays(items.offsets, pc.struct_field(items.values, [0]))
    grades = pc.struct_field(items.values, [1])
    gain_of = pa.array(list(module.GAINS.values()) + [0], pa.int32())
    position = pc.fill_null(pc.index_in(grades, value_set=pa.array(list(module.GAINS), pa.string())), len(module.GAINS))
    gains = pc.take(gain_of, position)
    ids = pa.chunked_array([ids])
    yield "qrels", _qrels(table["idx"], ids, gains)
    yield "qrels-l1", _qrels(table["idx"], ids, gains, keep=pc.equal(grades, "L1"))


def m2kr_tables(module, load):
    """M2KR: passage content and screenshot as the document, the question (may be empty), image and instruction
    (PreFLMR's query text starts with it) as the query, score 1 for every positive passage."""
    passages = load("challenge_passage")
    yield "corpus", _side(passages, {"passage_id": "id", "passage_content": "text", "image": "image"}, CORPUS_SPLIT)
    queries = {"question_id": "id", "question": "text", "image": "image", "instruction": "instruction"}
    yield "query", _side(load("challenge_data"), queries)
    answers = load("challenge_answers")
    table = answers.with_format("arrow")[:]
    positives = table["pos_item_ids"]
    ones = pa.array([1] * len(pc.list_flatten(positives.combine_chunks())), pa.int32())
    yield "qrels", _qrels(table["question_id"], positives, ones)
