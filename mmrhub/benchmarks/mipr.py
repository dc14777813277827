"""MIPR, everything in one place: the declaration, how its judgments are read for scoring, its oracle, its MTEB
tables and task facts, its dataset card's prose and how a report shows it."""

import os
import sys
from functools import partial
from pathlib import Path
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mipr_format import IMAGE_DIRS
from mipr_format import SOURCE_FILES
from mipr_format import read_config
from mmrhub.declaration import CARD_SNIPPETS
from mmrhub.declaration import Benchmark
from mmrhub.declaration import Breakdown
from mmrhub.declaration import BundledRun
from mmrhub.declaration import Grade
from mmrhub.declaration import MtebFacts
from mmrhub.declaration import Option
from mmrhub.declaration import Side
from mmrhub.declaration import View
from mmrhub.export import mteb_layout
from mmrhub.metrics.mipr import mipr_measures
from mmrhub.metrics.mipr.mipr_measures import GAINS
from mmrhub.metrics.mipr.mipr_measures import first_covers
from mmrhub.report.views import rows_of
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.judgments import contiguous_columns
from mmrhub.scoring.judgments import coverage_notes
from mmrhub.scoring.judgments import existing_folder
from mmrhub.scoring.judgments import numpy_array
from mmrhub.scoring.judgments import validated
from mmrhub.scoring.oracle import python_lists
from mmrhub.scoring.oracle import reorder

NO_L1 = "(no L1)"
ORDERS = ("baseline", "coverage")

# ---------------------------------------------------------------------------------------------------------------
# Judgments, read from the three JSON Lines files, with the builder's own checks (mipr_format)

IMAGES = Path(IMAGE_DIRS["queries"]).parent  # images/: both image folders


def judgment_files(folder) -> list:
    """The three JSON Lines files scoring reads."""
    return [Path(folder) / name for name in SOURCE_FILES.values()]


def image_inputs(folder) -> list:
    """The image folder the builder and reports read."""
    return [Path(folder) / IMAGES]


def read_truth(data_dir) -> Truth:
    """MIPR's judgments, corpus ids and query ids from the three JSON Lines files, validated as the builder validates
    its three configs (a MiprDataError naming the file and line otherwise) and cached."""
    folder = existing_folder(data_dir)
    for name in SOURCE_FILES.values():
        if not (folder / name).is_file():
            raise FileNotFoundError(
                f"{folder / name} is missing or not a file: the data folder must hold the official "
                f"MIPR files ({', '.join(SOURCE_FILES.values())})."
            )

    def read():  # the builder's checks, config by config in its order; the image folders are its alone
        base = os.path.abspath(folder)  # as the builder names the files
        read = {}  # qrels is checked against the ids of the two tables read before it, not read again
        for config in ("queries", "corpus", "qrels"):
            read[config] = read_config(config, base, read=read)
        return prepared({config: contiguous_columns(table) for config, table in read.items()})

    def prepared(tables):  # judgments as the metric indexes them: ids coded against the corpus, in code order per query
        annotation, corpus = tables["qrels"], tables["corpus"]
        items = annotation["items"]
        codes = pc.index_in(pc.struct_field(items.values, [0]), value_set=corpus["item_id"]).to_numpy()
        rows = pc.list_parent_indices(items).to_numpy()
        order = np.lexsort((codes, rows))
        codes = numpy_array(codes[order].astype(np.int32), pa.int32())
        order = numpy_array(order, pa.int64())
        paths = pc.dictionary_encode(corpus["treecate_full_path"])
        columns = {
            "item_ids": pa.DictionaryArray.from_arrays(codes, corpus["item_id"]),
            "grades": pc.dictionary_encode(pc.struct_field(items.values, [1]).take(order)),
            "categories": pa.DictionaryArray.from_arrays(paths.indices.take(codes), paths.dictionary),
        }
        lists = {name: pa.ListArray.from_arrays(items.offsets, values) for name, values in columns.items()}
        return {
            "queries": {"idx": tables["queries"]["idx"]},
            "corpus": {"item_id": corpus["item_id"]},
            "judgments": {"idx": annotation["idx"], **lists},
        }

    # an edit of the rules (or of how files are read) makes a new cache entry
    rules = [sys.modules[module].__file__ for module in (read_config.__module__, "mmr_inputs")]
    tables = validated("mipr", [*(folder / name for name in SOURCE_FILES.values()), *rules], read)
    queries, corpus, judged = tables["queries"], tables["corpus"], tables["judgments"]
    query_ids = judged["idx"]
    judgments = mipr_measures.Qrels(
        judged["item_ids"], judged["grades"], judged["categories"], query_ids=query_ids.to_pylist()
    )
    unjudged = pc.filter(queries["idx"], pc.invert(pc.is_in(queries["idx"], value_set=query_ids)))
    notes = coverage_notes(folder / SOURCE_FILES["queries"], len(unjudged), pc.list_value_length(judged["item_ids"]))
    return Truth(query_ids, corpus["item_id"], judgments, partial(main_categories, judgments), unjudged, notes)


def main_categories(qrels) -> list:
    """Each query's most frequent first path segment among its L1 items (ties: first by name), else NO_L1."""
    l1 = qrels.gain[:-1] == GAINS["L1"]
    tops = pc.replace_substring_regex(qrels.paths, "-.*", "").take(qrels.category["path"][:-1][l1])  # first segment
    counts = (
        pa.table({"row": qrels.pairs.rows[l1], "top": tops}).group_by(["row", "top"]).aggregate([([], "count_all")])
    )
    ranked = counts.sort_by([("count_all", "ascending"), ("top", "descending")])  # each row's best comes last
    best = dict(zip(ranked["row"].to_pylist(), ranked["top"].to_pylist()))
    return [best.get(row, NO_L1) for row in range(qrels.num_queries)]


# ---------------------------------------------------------------------------------------------------------------
# The Candidate-pool Oracle, the MTEB tables, the card's prose, the report's view and the MTEB task's facts


def oracle(qrels, rankings, order: str = "baseline", category: str = "path", covered_by: str = "L1") -> list:
    """Each pool by true gain (L1, L2, the rest; baseline order within a grade). ``order="coverage"`` then puts
    first, within each grade, the items that cover one of the query's L1 categories no earlier item covers, as
    SC-R-L1 counts coverage under the same ``category`` and ``covered_by`` readings."""
    if order not in ORDERS:
        raise ValueError(f"order={order!r}: expected one of {list(ORDERS)}")
    rankings = python_lists(rankings)
    grade = GAINS["L1"] - qrels.gain[qrels.pairs.find(rankings)]  # 0 for L1, 1 for L2, 2 for the rest
    ordered = reorder(rankings, grade)
    if order == "coverage":  # coverage is counted in the grade order, as the run will be read
        judged = qrels.pairs.find(ordered)
        first = first_covers(qrels, judged, category, covered_by)
        ordered = reorder(ordered, 2 * (GAINS["L1"] - qrels.gain[judged]) + 1 - first)
    return ordered


def mteb_tables(module, load):
    """MIPR: product title as the document text, the question as the query text, score = the grade's gain;
    ``qrels-l1`` keeps the L1 rows only, on which MTEB's recall and hit rate are MIPR's R-L1 and Hit-L1."""
    yield (
        "corpus",
        mteb_layout.side(
            load("corpus"), {"item_id": "id", "title": "text", "image": "image"}, mteb_layout.CORPUS_SPLIT
        ),
    )
    yield "query", mteb_layout.side(load("queries"), {"idx": "id", "query": "text", "image": "image"})
    yield from qrels_tables(module, load)


def qrels_tables(module, load):
    """The judgments as qrels rows (query-id, Q0, corpus-id, score = the grade's gain: L1=2, L2=1, others 0), and
    ``qrels-l1`` with the L1 rows only: MTEB's and trec_eval's recall and hit rate on it are R-L1 and Hit-L1."""
    qrels = load("qrels")
    table = qrels.with_format("arrow")[:]
    items = table["items"].combine_chunks()
    ids = pa.ListArray.from_arrays(items.offsets, pc.struct_field(items.values, [0]))
    grades = pc.struct_field(items.values, [1])
    gain_of = pa.array(list(module.GAINS.values()) + [0], pa.int32())
    position = pc.fill_null(pc.index_in(grades, value_set=pa.array(list(module.GAINS), pa.string())), len(module.GAINS))
    gains = pc.take(gain_of, position)
    ids = pa.chunked_array([ids])
    yield "qrels", mteb_layout.qrels(table["idx"], ids, gains)
    yield "qrels-l1", mteb_layout.qrels(table["idx"], ids, gains, keep=pc.equal(grades, "L1"))


CARD = {
    "trec_notes": (
        "`qrels.txt` holds every judgment (L1=2, L2=1, N1, N2 and N3 0): trec_eval's `ndcg_cut.k` on it is "
        "MIPR's nDCG@k. `qrels-l1.txt` holds the L1 judgments only: trec_eval's `recall.k` and `success.k` on"
        " it are R-L1@k and Hit-L1@k over the queries with an L1 judgment (trec_eval leaves a query without "
        "one out; MIPR scores it 0 with the default `--no-l1 zero`). SC-R-L1 needs the products' categories "
        "and has no trec_eval measure."
    ),
    "pretty_name": "MIPR",
    "language": ["zh"],
    "task_categories": ["visual-document-retrieval", "text-retrieval"],
    "tags": ["multimodal-retrieval", "e-commerce", "product-search"],
    "summary": (
        "MIPR is a benchmark for reasoning-intensive multimodal intent-to-product retrieval in Chinese e-commerce. "
        "Each query pairs a situational image with a free-form question; a retriever must find the products of a "
        "shared corpus that satisfy the underlying need, which may span several product categories. Built from "
        "real Taobao search queries and product listings."
    ),
    "full_counts": "3,522 queries, 30,731 products and 447,809 graded judgments",
    "sources": (
        "- **Repository:** the MIPR release (dataset, evaluation code and construction pipeline); its README is the "
        "source of this card."
    ),
    "creation": (
        "Construction combines query filtering and intent analysis, two-round product-term generation, "
        "multi-route retrieval, deduplication, three-model relevance labeling with Sonnet adjudication, and "
        "retrieval-based pooling. Product IDs are hashed and query IDs are renumbered."
    ),
    "limitations": (
        "Judgments cover the discovered and pooled candidates, not every query-product pair: unjudged pairs "
        "receive zero gain. The benchmark reflects Chinese e-commerce queries and the supplied product corpus; its "
        "solution categories are the annotated ones, not an exhaustive list of all possible solutions. It is an "
        "evaluation benchmark with no training split."
    ),
    "evaluate_snippet": CARD_SNIPPETS / "mipr_evaluate.py",
    "mteb_metrics": (
        "On the `qrels` config MTEB's `ndcg_at_10` is MIPR's nDCG@10 (the scores are the grade gains L1=2, L2=1). "
        "MTEB's `recall_at_k` and `hit_rate_at_k` on `qrels` count L2 products as relevant too, so they are not "
        "MIPR measures; on the `qrels-l1` config (L1 judgments only) they are MIPR's R-L1@k and Hit-L1@k, over "
        "the queries with at least one L1 judgment (MIPR scores a query without one as 0, MTEB leaves it out). "
        "MTEB cannot compute SC-R-L1@k: it needs the products' leaf categories, which are in the `corpus` config "
        "of the plain export and the MIPR metric, not in MTEB. Versions differ: mteb 1.x's hit rate counts a "
        "judged row of score 0 (an N1-N3 product) as a hit, mteb 2's does not, so use mteb 2 or `qrels-l1` for "
        "Hit-L1; evaluating with mteb 1.x needs torchvision."
    ),
    "mteb_evaluate": """\
Needs `pip install "mteb>=2" pillow` (mteb decodes the images with Pillow but does not install it). The task
below uses mteb 2's public API only; `mteb.evaluate` takes any MTEB model in place of `Ranking()`
(`mteb.get_model("openai/clip-vit-base-patch32")`, say). With mmrhub, the package that wrote this export, the
task is `mmrhub.mteb.{mteb_task}`, and `mmrhub mteb mipr --model NAME` runs an MTEB model and prints
MIPR's full table, SC-R-L1 included.""",
    "mteb_snippet": CARD_SNIPPETS / "mipr_mteb.py",
}


def _grades(table: pa.Table, query_ids) -> dict:
    rows = rows_of(table, "idx", query_ids)
    return {
        idx: {item["item_id"]: item["final_grade"] for item in items}
        for idx, items in zip(rows["idx"].to_pylist(), rows["items"].to_pylist())
    }


VIEW = View(
    top_k=10,
    main_measure="nDCG@10",
    grades=(
        Grade("L1", "#1a9850"),
        Grade("L2", "#91cf60"),
        Grade("N1", "#fc8d59"),
        Grade("N2", "#fdae61"),
        Grade("N3", "#d73027"),
        Grade("unjudged", "#bdbdbd"),
    ),
    relevant="L1",
    judgments_config="qrels",
    read_grades=_grades,
)

MTEB = MtebFacts(
    description=(
        "MIPR: reasoning-intensive multimodal intent-to-product retrieval in Chinese e-commerce. A query is a "
        "situational image and a free-form question; the corpus holds Taobao products (image and title); the "
        "graded judgments (L1, L2, N1, N2, N3) score L1=2, L2=1, others 0."
    ),
    eval_langs=("zho-Hans",),
    main_score="ndcg_at_10",
    domains=("E-commerce",),
    annotations_creators="LM-generated",
    same_as={"ndcg_at_10": "nDCG@10"},
    differences=(
        "MTEB's recall_at_k and hit_rate_at_k count L2 products as relevant (a hit rate over L2, not Hit-L1); on the "
        "export's qrels-l1 config they are R-L1@k and Hit-L1@k, but MTEB leaves out the queries without an L1 "
        "judgment, which MIPR keeps (scoring 0); SC-R-L1 has no MTEB score (it needs the products' categories)."
    ),
)

# ---------------------------------------------------------------------------------------------------------------
# The declaration


def reading_option(name: str, reading) -> Option:
    """An open rule as the commands take it (``--name``), its help in the metric card's words (declared once, in
    ``mipr_measures.READINGS``) without their Markdown."""
    choices = ", ".join(f"{value} = {meaning}" for value, meaning in reading.choices.items())
    words = f"{reading.decides}: {choices}; the default: {reading.why}"
    return Option(name, tuple(reading.choices), words.replace("\\|", "|").replace("`", ""))


def _builder() -> ModuleType:
    import mipr

    return mipr


MIPR = Benchmark(
    name="mipr",
    title="MIPR",
    builder=_builder,
    split="test",
    configs=("queries", "corpus", "qrels"),
    default_config="qrels",
    queries=Side("queries", "idx", "query", "image_url"),
    corpus=Side("corpus", "item_id", "title", "pict_url"),
    measures=mipr_measures,
    footnoted=("SC-R-L1@k", "SC-R-L1@k*"),
    oracle=oracle,
    oracle_readings=("category", "covered_by"),
    oracle_help="each pool by grade: L1, then L2, then the rest",
    runs_help=(
        "the official data's two baselines (embedding and reranked), with the embedding run's oracle row: the MIPR "
        "paper's table"
    ),
    read_truth=read_truth,
    judgment_files=judgment_files,
    image_inputs=image_inputs,
    options=(
        *(reading_option(name, reading) for name, reading in mipr_measures.READINGS.items()),
        Option("order", ORDERS, "the oracle's order within a grade", oracle=True),
    ),
    breakdown=Breakdown("--by-category", "Top-level category", "by_category"),
    card=CARD,
    mteb_tables=mteb_tables,
    qrels_tables=qrels_tables,
    bundled_runs=(
        BundledRun(
            "Qwen3-VL-Embedding-8B",
            "baseline/qwen3_vl_embedding_8b_top50.json",
            "baseline/simulated_embedding_top50.json",
        ),
        BundledRun(
            "Qwen3-VL-Reranker-8B", "baseline/qwen3_vl_reranker_8b_top50.json", "baseline/simulated_reranker_top50.json"
        ),
    ),
    report=VIEW,
    mteb=MTEB,
    published_table=tuple(
        dict(zip(("nDCG@10", "R-L1@10", "Hit-L1@1", "Hit-L1@10", "SC-R-L1@10", "SC-R-L1@10*"), values))
        for values in (
            (49.23, 53.98, 47.02, 85.63, 61.33, 55.86),  # Qwen3-VL-Embedding-8B
            (60.11, 66.00, 59.26, 91.25, 71.52, 67.00),  # Qwen3-VL-Reranker-8B
            (86.04, 78.95, 94.97, 94.97, 82.80, 80.22),  # Candidate-pool Oracle
        )
    ),
    published_counts=(("num_multi_category_queries", 2664),),  # SC-R-L1@10*'s queries, two L1 categories or more
)
