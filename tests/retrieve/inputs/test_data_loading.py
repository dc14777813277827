"""Every input is prepared in the DataLoader workers (image, processor, tokeniser), and what they build is exactly
what the main process built before: the tensors sentence-transformers' own ``encode_query`` / ``encode_document``
hand the model, and the pairs ``CrossEncoder.predict`` preprocesses. The reranker prepares each query's image once.
CPU, tiny random models of the torchvision-free layouts (Qwen3-VL's: test_qwen3vl.py)."""

import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from _mipr_helpers import read_jsonl  # noqa: E402
from _paths import MIPR_EMBEDDING  # noqa: E402
from _paths import MIPR_SAMPLE  # noqa: E402
from tiny_models import build_tiny_llava_reranker  # noqa: E402
from tiny_models import build_tiny_sentence_transformer  # noqa: E402

from mmrhub.benchmarks import MIPR  # noqa: E402


@pytest.fixture(scope="module")
def sides():
    from mmrhub.retrieve.data_loading import load_side
    from mmrhub.retrieve.options import DataOptions

    data = DataOptions(MIPR)
    return load_side(data, "queries"), load_side(data, "corpus")


@pytest.fixture(scope="module")
def st_model(built):
    texts = [row["title"] for row in read_jsonl(MIPR_SAMPLE / "mipr_corpus.jsonl")]
    texts += [row["query"] for row in read_jsonl(MIPR_SAMPLE / "mipr_query.jsonl")]
    return built(build_tiny_sentence_transformer, "st", texts)


def recorded_features(model):
    """The features every forward pass of ``model`` receives, in call order."""
    seen, forward = [], model.forward

    def recording(features, **kwargs):
        seen.append({key: value.clone() if hasattr(value, "clone") else value for key, value in features.items()})
        return forward(features, **kwargs)

    model.forward = recording
    return seen


def assert_same_features(ours: dict, theirs: dict):
    import torch

    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(ours[key], value), key
        else:
            assert ours[key] == value, key


@pytest.mark.slow
def test_worker_batches_are_the_main_process_inputs(st_model, sides):
    """Batches built by two DataLoader workers hold, part by part, the very tensors that sentence-transformers'
    encode_query / encode_document give the model for the same items (the path the main process took before), and
    give the same vectors."""
    import torch
    import torch.nn.functional as F

    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import loader
    from mmrhub.retrieve.encoders import CORPUS
    from mmrhub.retrieve.encoders import QUERIES
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.encoders import fuse
    from mmrhub.retrieve.model_inputs import rgb
    from mmrhub.retrieve.options import ModelSettings

    encoder = build_encoder("sentence-transformers", str(st_model), ModelSettings().resolve(str(st_model), "embedding"))
    assert not encoder.fused  # images and texts apart: two calls a batch, fused by the rule
    for side, role in zip(sides, (QUERIES, CORPUS)):
        items = Items(side.dataset, side.table)
        for batch in loader(items, encoder.collate(role), 8, 2, pin_memory=False):
            rows = items.__getitems__([side.ids.index(row_id) for row_id in batch["ids"]])
            images = [rgb(row.id, row.image) for row in rows]
            texts = [row.text for row in rows if row.text is not None]
            encode = encoder.model.encode_query if role == QUERIES else encoder.model.encode_document
            seen = recorded_features(encoder.model)
            kwargs = dict(convert_to_tensor=True, normalize_embeddings=True, show_progress_bar=False)
            image = encode(images, batch_size=len(images), **kwargs)
            text = encode(texts, batch_size=len(texts), **kwargs) if texts else None
            del encoder.model.forward
            assert len(seen) == len(batch["parts"])
            for part, theirs in zip(batch["parts"], seen):
                assert_same_features(part["features"], theirs)
            before = fuse(image.float(), None if text is None else text.float(), batch["has_text"], 0.5)
            assert torch.equal(encoder.encode(batch, role), before)
            assert torch.allclose(F.normalize(before, dim=-1), before)


@pytest.fixture(scope="module")
def reranker(built):
    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    folder = built(build_tiny_llava_reranker, "reranker")
    return Reranker(str(folder), ModelSettings().resolve(str(folder), "reranker"))


RERANK_BATCH = 6


def rerank_work(sides, top_n=5, chunk_queries=8):
    """The chunks of a rerank of the sample's embedding run with their pairs' text lengths, as the pipeline makes
    them (the workers batch them, ``RERANK_BATCH`` pairs a batch)."""
    from mmrhub.retrieve.rerank.pairs import chunks
    from mmrhub.retrieve.run_files import read_pools

    queries, corpus = sides
    pools = read_pools(MIPR_EMBEDDING, MIPR.read_truth(MIPR.sample_dir), queries.ids, corpus.ids).tolist()
    texts = list(queries.dataset["query"]), list(corpus.dataset["title"])
    work = []
    for number, chunk in enumerate(chunks([[c for c in pool if c >= 0] for pool in pools], chunk_queries, top_n)):
        lengths = [len(texts[0][q] or "") + len(texts[1][c] or "") for q, c in chunk.pairs]
        work.append((number, chunk.pairs, lengths))
    return work


def test_rerank_batches_from_workers_are_the_pairs_inputs(reranker, sides):
    """Two workers, each making whole chunks with every image prepared once, give the features that preprocessing
    each pair on its own (both images prepared for it, the path before) gives."""
    import torch

    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import worker_context
    from mmrhub.retrieve.rerank.model import PairBatches
    from mmrhub.retrieve.rerank.pipeline import as_made

    queries, corpus = (Items(side.dataset, side.table) for side in sides)
    work = rerank_work(sides)
    stream = PairBatches(queries, corpus, work, reranker, RERANK_BATCH)
    made = torch.utils.data.DataLoader(
        stream, batch_size=None, num_workers=2, collate_fn=as_made, multiprocessing_context=worker_context(2)
    )
    pairs_of = {number: pairs for number, pairs, _ in work}
    seen = set()
    collate = reranker.collate()
    for chunk, positions, features, path in made:
        assert path == reranker.whole_because and len(positions) <= RERANK_BATCH  # a LLaVA reranker: whole pairs
        pairs = [pairs_of[chunk][position] for position in positions]
        rows = [(queries[q], corpus[c]) for q, c in pairs]
        assert_same_features(features, collate(rows))
        seen.update((chunk, position) for position in positions)
    assert seen == {(number, position) for number, pairs, _ in work for position in range(len(pairs))}


def test_the_reranker_prepares_each_query_image_once(reranker, sides, monkeypatch):
    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.rerank.model import PairBatches

    queries, corpus = (Items(side.dataset, side.table) for side in sides)
    work = rerank_work(sides)
    prepared = []
    prepare = reranker.prepare_image
    monkeypatch.setattr(
        reranker, "prepare_image", lambda row_id, image: prepared.append(row_id) or prepare(row_id, image)
    )
    batches = list(PairBatches(queries, corpus, work, reranker, RERANK_BATCH))
    assert sum(len(pairs) for _, pairs, _ in work) == sum(len(positions) for _, positions, _, _ in batches)
    query_ids = set(sides[0].ids)
    pairs = sum(len(pairs) for _, pairs, _ in work)
    shown = [row_id for row_id in prepared if row_id in query_ids]
    assert sorted(shown) == sorted(set(shown)) and len(shown) == len(sides[0].ids) < pairs  # once, not 5 times
    distinct_per_chunk = sum(len({c for _, c in chunk_pairs}) for _, chunk_pairs, _ in work)
    assert len(prepared) - len(shown) == distinct_per_chunk


def test_workers_default_to_the_cores_this_process_may_use(monkeypatch):
    from mmrhub.retrieve import options

    monkeypatch.setattr(options.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert options.default_num_workers() == 3 == options.RunOptions().num_workers
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # torchrun's processes on this machine share them
    assert options.default_num_workers() == 1


FAULTS = """
import resource, sys
import torch
from mmrhub.retrieve.data_loading import keep_freed_memory
if sys.argv[1] == "kept":
    keep_freed_memory()
torch.ones(64 << 20, dtype=torch.uint8)  # a batch's 64 MiB, made and freed
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(8):  # the next eight batches'
    torch.ones(64 << 20, dtype=torch.uint8)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
BATCH_PAGES = (64 << 20) // 4096


@pytest.mark.slow  # two processes importing torch
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_workers_keep_freed_memory_for_later_batches():
    """By default every 64 MiB batch faults in fresh pages; a worker that keeps freed memory reuses them for some
    of its later batches. Only some: the allocator's small blocks land in the freed space, and a batch that no
    longer fits there extends the heap (1 to 7 of 8 batches faulted in runs here, never all 8)."""
    faults = {}
    for mode in ("default", "kept"):
        done = subprocess.run([sys.executable, "-c", FAULTS, mode], capture_output=True, text=True, check=True)
        faults[mode] = int(done.stdout.split()[-1])
    assert faults["default"] >= 8 * BATCH_PAGES  # every batch on fresh pages
    assert faults["kept"] <= 7 * BATCH_PAGES + 64  # at least one batch on the pages of one before
