"""PreFLMR against its authors' own code: every (query, passage) score of the bundled M2KR sample, from the tiny
checkpoint rebuilt offline from the fixture's seed, equals the score LinWeizheDragon/FLMR's unchanged code gave
(``scripts/preflmr_reference.py`` made the fixture, transformers 4.49 in a venv of its own) within 1e-4 relative:
the queries as they are, query-only (no image) and image-only (empty question)."""

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _paths import M2KR_SAMPLE  # noqa: E402
from _paths import ROOT  # noqa: E402
from preflmr_reference import PROCESSOR  # noqa: E402
from preflmr_reference import SEED  # noqa: E402
from preflmr_reference import SIZE  # noqa: E402
from preflmr_reference import VARIANTS  # noqa: E402
from tiny_models import build_preflmr  # noqa: E402
from tiny_models import m2kr_sample_texts  # noqa: E402

from mmrhub.retrieve.data_loading import Row  # noqa: E402
from mmrhub.retrieve.images import decoded  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder  # noqa: E402
from mmrhub.retrieve.presets import EXIF_IGNORE  # noqa: E402

FIXTURE = ROOT / "tests" / "retrieve" / "data" / "preflmr_reference.json"
RELATIVE = 1e-4


@pytest.fixture(scope="module")
def reference():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def checkpoint(built, reference):
    made = reference["checkpoint"]
    assert (made["size"], made["seed"]) == (SIZE, SEED)
    return built(build_preflmr, "tiny", SIZE, seed=SEED, texts=m2kr_sample_texts(M2KR_SAMPLE))


@pytest.fixture(scope="module")
def encoder(checkpoint):
    return build_preflmr_encoder(str(checkpoint), image_processor=str(checkpoint / PROCESSOR))


@pytest.fixture(scope="module")
def sample():
    from datasets import Image

    import m2kr

    queries = m2kr.load("challenge_data").cast_column("image", Image(decode=False))
    passages = m2kr.load("challenge_passage")
    return queries, passages


@pytest.fixture(scope="module")
def passage_vectors(encoder, sample):
    _, passages = sample
    corpus = [Row(i, text, None) for i, text in zip(passages["passage_id"], passages["passage_content"])]
    return encoder.encode(encoder.collate("corpus")(corpus), "corpus")


def maxsim(queries, query_mask, passages, passage_mask):
    """Sum over the query's kept tokens of the max over the passage's kept tokens, every pair: (Q, P)."""
    similarity = torch.einsum("qtd,psd->qpts", queries, passages)
    best = similarity.masked_fill(~passage_mask[None, :, None, :], float("-inf")).max(-1).values
    return (best * query_mask[:, None, :]).sum(-1)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_pair_scores_as_the_authors_code(encoder, sample, passage_vectors, reference, variant):
    queries, passages = sample
    assert list(queries["question_id"]) == reference["query_ids"]
    assert list(passages["passage_id"]) == reference["passage_ids"]
    rows = []
    for row in queries:
        image = None if variant == "query_only" else decoded(row["image"], EXIF_IGNORE)
        question = "" if variant == "image_only" else row["question"]
        rows.append(Row(row["question_id"], question or None, image, row["instruction"]))
    scores = maxsim(*encoder.encode(encoder.collate("queries")(rows), "queries"), *passage_vectors)
    expected = torch.tensor(reference["scores"][variant])
    assert scores.shape == expected.shape == (30, 300)
    relative = ((scores - expected).abs() / expected.abs()).max().item()
    assert relative < RELATIVE, f"{variant}: largest relative difference {relative:.2e}"


def test_variants_differ(reference):
    # the three variants exercise different inputs: some questions are not empty, and images count
    scores = reference["scores"]
    assert scores["as_is"] != scores["image_only"]
    assert scores["as_is"] != scores["query_only"]


@pytest.mark.slow
def test_retrieve_run_scores_as_the_authors_code(checkpoint, reference, tmp_path):
    # the whole pipeline (the preset, collate, packed passages, exact MaxSim): every score of the run is the authors'
    from _retrieve_helpers import retrieve

    _, run, _ = retrieve(
        tmp_path,
        "m2kr",
        "--preset",
        "preflmr",
        "--model",
        checkpoint,
        "--image-processor",
        checkpoint / PROCESSOR,
        "--top-k",
        300,
    )
    expected = reference["scores"]["as_is"]
    passages = {pid: j for j, pid in enumerate(reference["passage_ids"])}
    found = 0
    for i, qid in enumerate(reference["query_ids"]):
        ranked = next(entry["ranked"] for entry in run if entry["qid"] == qid)
        assert len(ranked) == 300
        for hit in ranked:
            want = expected[i][passages[hit["did"]]]
            assert abs(hit["score"] - want) <= RELATIVE * abs(want), (qid, hit["did"])
            found += 1
    assert found == 9000
