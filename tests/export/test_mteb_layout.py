"""``--format mteb``: the MIEB Hub layout, corpus (split ``corpus``) / query (``id``, ``modality``, ``text``,
``image``) and qrels (``query-id``, ``Q0``, ``corpus-id``, integer ``score`` = the graded gain), loaded by mteb 2's
own retrieval loader (mteb 1.x's: tests/export/test_mteb_layout_mteb1.py)."""

import datasets
import pytest
from _export_helpers import EXPECTED
from _export_helpers import builder_module
from datasets import load_dataset
from huggingface_hub import DatasetCard

STRING = datasets.Value("string")
SIDE = {"id": STRING, "modality": STRING, "text": STRING, "image": datasets.Image()}
QRELS = datasets.Features({"query-id": STRING, "Q0": STRING, "corpus-id": STRING, "score": datasets.Value("int32")})
SCHEMAS = {
    "mipr": {"corpus": datasets.Features(SIDE), "query": datasets.Features(SIDE), "qrels": QRELS, "qrels-l1": QRELS},
    "m2kr": {
        "corpus": datasets.Features(SIDE),
        "query": datasets.Features({**SIDE, "instruction": STRING}),
        "qrels": QRELS,
    },
}


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_mteb_layout_matches_the_builders(exported, benchmark):
    out = str(exported(benchmark, "mteb"))
    corpus_ids, corpus_text, query_ids, query_text, judgments = EXPECTED[benchmark]()
    schema = SCHEMAS[benchmark]
    tables = {config: load_dataset(out, config, split="corpus" if config == "corpus" else "test") for config in schema}
    for config, features in schema.items():
        assert tables[config].features == features
    assert tables["corpus"]["id"] == corpus_ids and tables["corpus"]["text"] == corpus_text
    assert tables["query"]["id"] == query_ids and tables["query"]["text"] == query_text
    assert set(tables["corpus"]["modality"]) == set(tables["query"]["modality"]) == {"image,text"}
    assert set(tables["qrels"]["Q0"]) == {"0"}
    pairs = {}
    for row in tables["qrels"]:
        pairs.setdefault(row["query-id"], {})[row["corpus-id"]] = row["score"]
    assert pairs == judgments and len(tables["qrels"]) == sum(len(docs) for docs in judgments.values())
    image = tables["corpus"].cast_column("image", datasets.Image(decode=False))[-1]["image"]
    assert image["bytes"] and image["path"]
    card = DatasetCard.load(exported(benchmark, "mteb") / "README.md")
    assert "mteb" in card.data.tags and [c["config_name"] for c in card.data.configs] == sorted(schema)


def test_mipr_scores_are_the_graded_gains(exported):
    qrels = load_dataset(str(exported("mipr", "mteb")), "qrels", split="test")
    mipr = builder_module("mipr")
    grades = {(row["idx"], item["item_id"]): item["final_grade"] for row in mipr.load("qrels") for item in row["items"]}
    for row in (qrels[0], qrels[len(qrels) // 2], qrels[-1]):
        assert row["score"] == mipr.GAINS.get(grades[row["query-id"], row["corpus-id"]], 0)
    assert set(qrels["score"]) == {0, 1, 2}


def test_mipr_l1_qrels_are_the_l1_judgments(exported):
    l1 = load_dataset(str(exported("mipr", "mteb")), "qrels-l1", split="test")
    mipr = builder_module("mipr")
    expected = [
        (row["idx"], item["item_id"])
        for row in mipr.load("qrels")
        for item in row["items"]
        if item["final_grade"] == "L1"
    ]
    assert list(zip(l1["query-id"], l1["corpus-id"])) == expected and set(l1["score"]) == {mipr.GAINS["L1"]}


def test_m2kr_queries_keep_the_instruction(exported):
    query = load_dataset(str(exported("m2kr", "mteb")), "query", split="test")  # MTEB's evaluation split
    assert query["instruction"] == builder_module("m2kr").load("challenge_data")["instruction"]


@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_mteb_retrieval_loader_reads_the_export(exported, benchmark):
    loaders = pytest.importorskip("mteb.abstasks.retrieval_dataset_loaders")
    out = str(exported(benchmark, "mteb"))
    corpus_ids, _, query_ids, _, judgments = EXPECTED[benchmark]()
    data = loaders.RetrievalDatasetLoader(out, revision=None, split="test").load()
    assert data["corpus"]["id"] == corpus_ids
    assert data["relevant_docs"] == {qid: docs for qid, docs in judgments.items() if docs}
    assert data["queries"]["id"] == [qid for qid in query_ids if judgments.get(qid)]
    assert data["queries"].features["image"] == datasets.Image() and data["top_ranked"] is None


@pytest.mark.parametrize(
    "benchmark, note",
    [
        ("mipr", "mteb 1.x's hit rate counts a judged row of score 0 (an N1-N3 product) as a hit"),
        ("m2kr", "mteb 2 appends the instruction after the question, the reverse of PreFLMR's order"),
    ],
)
def test_the_card_says_where_mteb_versions_differ(exported, benchmark, note):
    card = (exported(benchmark, "mteb") / "README.md").read_text(encoding="utf-8")
    assert note in " ".join(card.split()) and "needs torchvision" in card
