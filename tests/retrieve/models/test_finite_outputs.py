"""A model that gives NaN or infinite values writes nothing (``mmrhub/retrieve/finite.py``): the tiny checkpoints of
every backend and preset this environment runs (Chinese-CLIP through transformers and through sentence-transformers, a
plain sentence-transformers dual encoder, PreFLMR, the LLaVA CrossEncoder reranker, an MTEB model), damaged as
``tests/helpers/_damaged_models.py`` damages them, end in one line naming the model and the item, exit 1, with no run
file, no record and no cache entry left; and no cache serves an entry holding such values. (Qwen3-VL's presets need
torchvision: their case is in tests/retrieve/rerank/test_qwen3vl.py.)"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _damaged_models import DAMAGES  # noqa: E402
from _damaged_models import WEIGHT_DAMAGES  # noqa: E402
from _damaged_models import damaged_copy  # noqa: E402
from _mipr_helpers import read_jsonl  # noqa: E402
from _paths import M2KR_SAMPLE  # noqa: E402
from _paths import MIPR_EMBEDDING  # noqa: E402
from _paths import MIPR_SAMPLE  # noqa: E402
from tiny_models import PREFLMR_PROCESSOR  # noqa: E402
from tiny_models import build_preflmr  # noqa: E402
from tiny_models import build_tiny_chinese_clip  # noqa: E402
from tiny_models import build_tiny_llava_reranker  # noqa: E402
from tiny_models import build_tiny_sentence_transformer  # noqa: E402
from tiny_models import m2kr_sample_texts  # noqa: E402

from mmrhub.cli import main  # noqa: E402
from mmrhub.retrieve.finite import NotFinite  # noqa: E402
from mmrhub.retrieve.finite import check  # noqa: E402

CORPUS_IDS = {row["item_id"] for row in read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")}
TAIL = (
    ": its weights, or the config or image processor it reads, are broken (a NaN or infinite weight, an image_std of "
    "0, ...). Nothing was written or cached. Check the model's files, or download them again."
)


@pytest.fixture(scope="module")
def texts():
    return [row["title"] for row in read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")]


@pytest.fixture(scope="module")
def tiny(built, texts):
    """The tiny checkpoints, built once: {name: (folder, the tensor a damage hits, command-line options)}."""
    clip = built(build_tiny_chinese_clip, "chinese-clip-tiny", texts)
    return {
        "chinese-clip (transformers)": (clip, "visual_projection.weight", ["--backend", "transformers"]),
        "chinese-clip (sentence-transformers)": (clip, "visual_projection.weight", []),
        "dual encoder (sentence-transformers)": (
            built(build_tiny_sentence_transformer, "st", texts),
            "visual_projection.weight",
            ["--preset", "none"],
        ),
    }


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("mmrhub ")]
    assert len(lines) == 1, err[-3000:]
    return lines[0]


def left_behind(tmp_path) -> list:
    """Every file the command left under the run's folder and its cache."""
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() and "models" not in p.parts)


@pytest.mark.slow
@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize(
    "model",
    ["chinese-clip (transformers)", "chinese-clip (sentence-transformers)", "dual encoder (sentence-transformers)"],
)
def test_a_single_vector_model_giving_nan_writes_nothing(tiny, model, damage, tmp_path, capsys):
    source, tensor, options = tiny[model]
    folder = damaged_copy(source, tmp_path / "models" / source.name, damage, tensor)
    run = tmp_path / "runs" / "run.json"
    argv = ["retrieve", "mipr", "--model", str(folder), *options, "--output", str(run), "--num-workers", "0"]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 1  # scoring on: the NaN run is never scored
    line = one_error_line(capsys.readouterr().err)
    prefix = f"mmrhub retrieve: error: {folder} gave NaN or infinite values for the corpus item '"
    assert line.startswith(prefix) and line.endswith(TAIL)
    assert line[len(prefix) :].split("'")[0] in CORPUS_IDS
    assert left_behind(tmp_path) == []  # no run, no record, no cache entry


@pytest.fixture(scope="module")
def preflmr(built):
    return built(build_preflmr, "PreFLMR-tiny", texts=m2kr_sample_texts(M2KR_SAMPLE))


@pytest.mark.slow
def test_preflmr_whose_finite_weights_overflow_writes_nothing(preflmr, tmp_path, capsys):
    """Weights finite but so large that the sums overflow: the load-time checks pass, the output check stops it."""
    folder = damaged_copy(
        preflmr, tmp_path / "models" / "PreFLMR-tiny", "overflowing weights", "query_text_encoder_linear.weight"
    )
    run = tmp_path / "runs" / "run.json"
    argv = ["retrieve", "m2kr", "--preset", "preflmr", "--model", str(folder), "--output", str(run)]
    argv += ["--image-processor", str(folder / PREFLMR_PROCESSOR), "--num-workers", "0"]
    assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"mmrhub retrieve: error: {folder} gave NaN or infinite values for the query '")
    assert line.endswith(TAIL)
    assert left_behind(tmp_path) == []  # the passages were fine, yet no cache entry: queries come after, cache after


@pytest.mark.slow
@pytest.mark.parametrize("damage", WEIGHT_DAMAGES)
def test_a_reranker_giving_nan_writes_nothing(damage, built, tmp_path, capsys):
    reranker = built(build_tiny_llava_reranker, "reranker")
    folder = damaged_copy(reranker, tmp_path / "models" / "reranker", damage, "language_model.model.norm.weight")
    run = tmp_path / "runs" / "run.json"
    argv = ["rerank", "mipr", "--candidates", str(MIPR_EMBEDDING), "--model", str(folder), "--top-n", "5"]
    argv += ["--output", str(run), "--num-workers", "0", "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"mmrhub rerank: error: {folder} gave NaN or infinite values for the pair of query '")
    assert "' and candidate '" in line and line.endswith(TAIL)
    assert left_behind(tmp_path) == []


@pytest.mark.slow
def test_an_mteb_model_giving_nan_writes_nothing(tmp_path, capsys, monkeypatch):
    pytest.importorskip("mteb")
    from mteb.models.model_implementations.random_baseline import RandomEncoderBaseline

    encode = RandomEncoderBaseline.encode

    def nan_for_documents(self, *args, **kwargs):
        embeddings = np.array(encode(self, *args, **kwargs), dtype=np.float32)
        if getattr(kwargs.get("prompt_type"), "value", None) == "document":
            embeddings[1, 0] = np.nan
        return embeddings

    monkeypatch.setattr(RandomEncoderBaseline, "encode", nan_for_documents)
    run, results = tmp_path / "runs" / "run.json", tmp_path / "results"
    argv = ["mteb", "mipr", "--model", "mteb/baseline-random-encoder", "--output", str(run), "--results", str(results)]
    assert main(argv) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line == (
        "mmrhub mteb: error: mteb/baseline-random-encoder gave NaN or infinite values for the embedding of document 2 "
        f"of a batch MTEB asked for{TAIL}"
    )
    assert left_behind(tmp_path) == []  # no run, no record, nothing in MTEB's results


def test_mteb_predictions_with_a_nan_score_are_named(tmp_path):
    from mmrhub.mteb.predictions import check_scores
    from mmrhub.mteb.predictions import read_predictions

    path = tmp_path / "predictions.json"
    saved = {"default": {"test": {"q1": {"d1": 0.5, "d2": 0.25}, "q2": {"d1": float("nan")}}}}
    path.write_text(json.dumps(saved))
    with pytest.raises(NotFinite) as raised:
        check_scores(read_predictions(path), "org/model")
    assert str(raised.value) == (
        f"org/model gave NaN or infinite values for query 'q2' and document 'd1' (MTEB's {path}){TAIL}"
    )


def test_the_check_names_the_first_item_and_counts_the_rest():
    check(torch.ones(3, 4), "m")  # finite: nothing said
    values = torch.ones(4, 2, 3)
    values[1, 0, 2], values[3, 1, 1] = float("inf"), float("nan")
    with pytest.raises(NotFinite) as raised:
        check(values, "org/m", lambda row: f"the query {['a', 'b', 'c', 'd'][row]!r}")
    assert str(raised.value) == f"org/m gave NaN or infinite values for the query 'b' (and 1 more of its batch){TAIL}"
    with pytest.raises(NotFinite, match="for item 2 of a batch:"):
        check(np.array([0.5, -np.inf]), "m")


def test_no_cache_serves_an_entry_holding_nan(tmp_path):
    """Entries an older mmrhub wrote with NaN values (it did not check) are computed again, never served."""
    from mmrhub.retrieve.embedding_cache import EmbeddingCache
    from mmrhub.retrieve.late_interaction.maxsim import PackedTokens
    from mmrhub.retrieve.late_interaction.tokens import TokenCache
    from mmrhub.retrieve.rerank.score_cache import ScoreCache

    vectors = np.ones((3, 4), dtype=np.float32)
    for bad in (False, True):
        vectors[1, 2] = np.nan if bad else 1.0
        cache = EmbeddingCache(tmp_path / f"embeddings-{bad}", {"model": "m"}, "data", 3)
        assert cache.save(vectors)
        assert (cache.load() is None) == bad
        scores = ScoreCache(tmp_path / f"scores-{bad}", {"model": "m"}, "data")
        assert scores.save("chunk", vectors[:, 2])
        assert (scores.load("chunk", 3) is None) == bad
        tokens = TokenCache(tmp_path / f"tokens-{bad}", {"model": "m"}, "data", 2)
        assert tokens.save(PackedTokens(torch.from_numpy(vectors.copy()), torch.tensor([0, 1, 3])))
        assert (tokens.load() is None) == bad
