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


def side(dataset, columns: dict, split=EVAL_SPLIT):
    """Keep ``columns`` (source name -> MTEB name) with ``modality`` after ``id``, as split ``split``."""
    import datasets  # here, not at the top: the benchmark modules import this one, and scoring never builds

    kept = dataset.select_columns(list(columns)).rename_columns(columns)
    kept = kept.add_column("modality", [MODALITY] * len(kept))
    names = list(columns.values())
    kept = kept.select_columns(names[:1] + ["modality"] + names[1:])
    return datasets.Dataset(kept.data, info=kept.info, split=split, indices_table=kept._indices)


def qrels(query_ids: pa.ChunkedArray, lists: pa.ChunkedArray, scores: pa.Array, keep=None):
    """One qrels row per element of ``lists`` (per query, the judged ids), scored by ``scores`` (one per element);
    ``keep``: a mask over the elements, to write only those."""
    import datasets  # here, not at the top: the benchmark modules import this one, and scoring never builds

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
