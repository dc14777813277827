"""M2KR, everything in one place: the declaration, how its judgments are read for scoring, its oracle, its MTEB
tables and task facts, its dataset card's prose and how a report shows it."""

import sys
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pyarrow.compute as pc

from m2kr_format import CONFIG_NAMES
from m2kr_format import SPLIT
from m2kr_format import read_config
from mmrhub.declaration import CARD_SNIPPETS
from mmrhub.declaration import Benchmark
from mmrhub.declaration import Breakdown
from mmrhub.declaration import BundledRun
from mmrhub.declaration import Grade
from mmrhub.declaration import MtebFacts
from mmrhub.declaration import Option
from mmrhub.declaration import PublishedBaseline
from mmrhub.declaration import Side
from mmrhub.declaration import View
from mmrhub.export import mteb_layout
from mmrhub.metrics.m2kr import m2kr_measures
from mmrhub.report.views import rows_of
from mmrhub.scoring.judgments import Truth
from mmrhub.scoring.judgments import contiguous_columns
from mmrhub.scoring.judgments import coverage_notes
from mmrhub.scoring.judgments import existing_folder
from mmrhub.scoring.judgments import validated
from mmrhub.scoring.oracle import python_lists
from mmrhub.scoring.oracle import reorder

# ---------------------------------------------------------------------------------------------------------------
# Judgments, read from the three Parquet tables, with the builder's own checks (m2kr_format)


def judgment_files(folder) -> list:
    """The Parquet tables scoring reads (none if the folder holds none)."""
    return [path for config in CONFIG_NAMES for path in sorted((Path(folder) / config).glob(f"{SPLIT}-*.parquet"))]


def image_inputs(folder) -> list:
    """The image archives the builder and reports read: ``images/`` and the zip parts beside the tables."""
    folder = Path(folder)
    return [folder / "images", *sorted(folder.glob("*.zip")), *sorted(folder.glob("*.zip.[0-9]*"))]


def read_truth(data_dir) -> Truth:
    """M2KR's judgments, passage ids and question ids from the three Parquet tables, validated as the builder
    validates its three configs (an M2krDataError naming the file and row otherwise) and cached."""
    folder = existing_folder(data_dir)
    files = {config: [str(path) for path in _parquet_files(folder, config)] for config in CONFIG_NAMES}

    def read():  # the builder's checks, config by config; the archives are its alone
        tables = {
            config: read_config(config, {name: (paths, paths) for name, paths in files.items()})
            for config in CONFIG_NAMES
        }
        return {
            "challenge_answers": contiguous_columns(tables["challenge_answers"]),
            "challenge_data": contiguous_columns(tables["challenge_data"].select(["question_id", "task"])),
            "challenge_passage": contiguous_columns(tables["challenge_passage"].select(["passage_id"])),
        }

    # an edit of the rules (or of how files are read) makes a new cache entry
    rules = [sys.modules[module].__file__ for module in (read_config.__module__, "mmr_inputs")]
    tables = validated("m2kr", [*(path for paths in files.values() for path in paths), *rules], read)
    answers, questions, passages = tables["challenge_answers"], tables["challenge_data"], tables["challenge_passage"]
    query_ids = answers["question_id"]
    tasks = questions["task"].take(pc.index_in(query_ids, value_set=questions["question_id"])).to_pylist()
    judgments = m2kr_measures.Positives(answers["pos_item_ids"], query_ids=query_ids.to_pylist())
    unjudged = pc.filter(questions["question_id"], pc.invert(pc.is_in(questions["question_id"], value_set=query_ids)))
    notes = coverage_notes(folder / "challenge_data", len(unjudged), pc.list_value_length(answers["pos_item_ids"]))
    return Truth(query_ids, passages["passage_id"], judgments, lambda: tasks, unjudged, notes, kaggle_csv=True)


def _parquet_files(folder: Path, config: str) -> list:
    files = sorted((folder / config).glob(f"{SPLIT}-*.parquet"))
    if not files:
        raise FileNotFoundError(f"No {config}/{SPLIT}-*.parquet under {folder}: --data-dir must hold the M2KR tables.")
    return files


# ---------------------------------------------------------------------------------------------------------------
# The Candidate-pool Oracle, the MTEB tables, the card's prose, the report's view and the MTEB task's facts


def oracle(positives, rankings) -> list:
    """Each pool with its positives first, baseline order kept otherwise."""
    rankings = python_lists(rankings)
    return reorder(rankings, positives.pairs.find(rankings) < 0)


def mteb_tables(module, load):
    """M2KR: passage content and screenshot as the document, the question (may be empty), image and instruction
    (PreFLMR's query text starts with it) as the query, score 1 for every positive passage."""
    passages = load("challenge_passage")
    yield (
        "corpus",
        mteb_layout.side(
            passages, {"passage_id": "id", "passage_content": "text", "image": "image"}, mteb_layout.CORPUS_SPLIT
        ),
    )
    queries = {"question_id": "id", "question": "text", "image": "image", "instruction": "instruction"}
    yield "query", mteb_layout.side(load("challenge_data"), queries)
    yield from qrels_tables(module, load)


def qrels_tables(module, load):
    """The positives as qrels rows (question_id, Q0, passage_id, score 1): trec_eval's recall on them is the
    track's Recall@k."""
    answers = load("challenge_answers")
    table = answers.with_format("arrow")[:]
    positives = table["pos_item_ids"]
    ones = pa.array([1] * len(pc.list_flatten(positives.combine_chunks())), pa.int32())
    yield "qrels", mteb_layout.qrels(table["question_id"], positives, ones)


CARD = {
    "trec_notes": (
        "`qrels.txt` holds every positive passage (relevance 1): trec_eval's `recall.k` on it is the track's "
        "Recall@k, and `success.k` FLMR's hit rate."
    ),
    "pretty_name": "M2KR-WWW2025-Challenge",
    "language": ["en"],
    "task_categories": ["visual-document-retrieval", "text-retrieval"],
    "tags": ["multimodal-retrieval", "knowledge-retrieval", "www2025-challenge"],
    "summary": (
        "M2KR-WWW2025-Challenge is a multimodal retrieval dataset for image-to-document and image+text-to-document "
        "matching, Task 2 of Track 1 (Multimodal Document Retrieval Challenge) at the EReL@MIR Workshop, The Web "
        "Conference 2025. Each query (an image, with an optional question) must retrieve its passages from a shared "
        "pool of passages. This release includes the evaluation ground truth (`challenge_answers`)."
    ),
    "full_counts": "6,415 queries and 47,318 passages",
    "sources": (
        "- **Paper:** https://arxiv.org/abs/2402.08327\n"
        "- **Project page:** https://preflmr.github.io/\n"
        "- **FLMR implementation:** https://github.com/LinWeizheDragon/FLMR\n"
        "- **Original challenge release:** https://huggingface.co/datasets/Jingbiao/M2KR-Challenge"
    ),
    "creation": (
        "A mirror of the challenge release Jingbiao/M2KR-Challenge with the ground truth added. The released "
        "`pos_item_ids` use the canonical `challenge_passage.passage_id` form and join directly to the passages."
    ),
    "limitations": (
        "About 47% of the queries carry a question; the others are image-only. 601 queries have more than one "
        "positive passage; such a query scores a recall of 1 at k only when all its positives are in its top k."
    ),
    "evaluate_snippet": CARD_SNIPPETS / "m2kr_evaluate.py",
    "mteb_metrics": (
        "MTEB's `recall_at_k` is the track's Recall@k exactly (every positive scores 1, and a query scores its "
        "share of positives found, so a query with several positives scores 1 only with all of them in the top "
        "k); the track's measure is the mean of `recall_at_1`, `recall_at_3` and `recall_at_5`. MTEB's "
        "`hit_rate_at_k` is FLMR's Recall@K (any positive in the top k). The `query` config keeps each query's "
        "`instruction`, which PreFLMR puts before the question. The challenge's queries (split `train` in the "
        "plain export) are the `test` split here, the split MTEB tasks evaluate. mteb 2 appends the instruction "
        "after the question, the reverse of PreFLMR's order; mteb 1.x's evaluation needs torchvision."
    ),
    "mteb_evaluate": """\
Needs `pip install "mteb>=2" pillow` (mteb decodes the images with Pillow but does not install it). The task
below uses mteb 2's public API only; `mteb.evaluate` takes any MTEB model in place of `Ranking()`
(`mteb.get_model("openai/clip-vit-base-patch32")`, say). With mmrhub, the package that wrote this export, the
task is `mmrhub.mteb.{mteb_task}`, and `mmrhub mteb m2kr --model NAME` runs an MTEB model and prints
the track's table.""",
    "mteb_snippet": CARD_SNIPPETS / "m2kr_mteb.py",
}


def _grades(table: pa.Table, query_ids) -> dict:
    rows = rows_of(table, "question_id", query_ids)
    return {
        qid: dict.fromkeys(ids, "positive")
        for qid, ids in zip(rows["question_id"].to_pylist(), rows["pos_item_ids"].to_pylist())
    }


VIEW = View(
    top_k=5,
    main_measure="Recall@5",
    grades=(Grade("positive", "#1a9850"), Grade("not positive", "#bdbdbd")),
    relevant="positive",
    judgments_config="challenge_answers",
    judgment_word="positive or not",
    read_grades=_grades,
)

MTEB = MtebFacts(
    description=(
        "M2KR WWW 2025 challenge (Task 2 of Track 1, EReL@MIR): for each image or image+question query, "
        "retrieve its passages from a shared pool of Wikipedia-like passages with web screenshots."
    ),
    reference="https://arxiv.org/abs/2402.08327",
    eval_langs=("eng-Latn",),
    main_score="recall_at_5",
    domains=("Encyclopaedic", "Web"),
    annotations_creators="derived",
    same_as={"recall_at_1": "Recall@1", "recall_at_3": "Recall@3", "recall_at_5": "Recall@5"},
    differences=(
        "MTEB's hit_rate_at_k is the Hit@k variant (any positive in the top k), not Recall@k; Recall-mean, the "
        "track score, has no MTEB score; mteb 2 appends each query's instruction after the question, the reverse of "
        "PreFLMR's order."
    ),
)

# ---------------------------------------------------------------------------------------------------------------
# The declaration


def _builder() -> ModuleType:
    import m2kr

    return m2kr


M2KR = Benchmark(
    name="m2kr",
    title="M2KR",
    builder=_builder,
    split="train",
    configs=("challenge_data", "challenge_passage", "challenge_answers"),
    default_config="challenge_data",
    queries=Side("challenge_data", "question_id", "question", "img_path"),
    corpus=Side("challenge_passage", "passage_id", "passage_content", "page_screenshot"),
    measures=m2kr_measures,
    footnoted=("Recall-mean", "Hit@k (variant `hit`)", "StrictRecall@k (variant `strict`)"),
    oracle=oracle,
    read_truth=read_truth,
    judgment_files=judgment_files,
    image_inputs=image_inputs,
    options=(
        Option(
            "variants",
            tuple(m2kr_measures.VARIANTS),
            "recall: the M2KR track's measure; hit: FLMR's Recall@K "
            "(any positive in the top k); strict: all positives in the top k",
            many=True,
        ),
    ),
    breakdown=Breakdown("--by-task", "Task", "by_task"),
    card=CARD,
    mteb_tables=mteb_tables,
    qrels_tables=qrels_tables,
    bundled_runs=(BundledRun("", "", "baseline/simulated_top5.json"),),
    report=VIEW,
    mteb=MTEB,
    images_dir_option=True,
    oracle_help="each pool with its positive passages first",
    runs_help="the bundled sample's simulated run (the M2KR release ships no run)",
    published_baseline=PublishedBaseline(
        name="PreFLMR ViT-G",
        model="LinWeizheDragon/PreFLMR_ViT-G",
        preset="preflmr",
        row=(("Recall@1", 19.5), ("Recall@3", 34.0), ("Recall@5", 41.2), ("Recall-mean", 31.6)),
        source="the M2KR challenge card",
        differences=(
            "Search: ours scores every passage exactly (MaxSim); the authors search an approximate PLAID index "
            "(LinWeizheDragon/FLMR examples/example_use_preflmr.py:78-89, nbits=8 at :361).",
            "Measure: the card's Recall@k (ours too) gives each query the share of its positives found in the top "
            "k, averaged over the queries; `--variants strict` scores all-or-nothing (1 only when every positive is "
            "in the top k); the authors' example counts a hit of any positive (example_use_preflmr.py:158-172): "
            "`mmrhub evaluate m2kr RUN --variants hit` gives it.",
            "The card prints one decimal; ours two.",
        ),
    ),
)
