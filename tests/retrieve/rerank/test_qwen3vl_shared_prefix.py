"""The reranker's shared prefix with a tiny Qwen3-VL reranker of the real layout: each query's image and prompt run
once for all its candidates give the whole pairs' scores (within 1e-5 in float32) and QwenLM's reranker's (within
the 1e-6 the tests hold the whole path to), on the MIPR and M2KR samples (each M2KR query's own instruction;
queries with and without a question) and on larger, oblong images, at batches of 1, 7 and 32.

transformers builds the Qwen3-VL processor only with torchvision installed, so this skips without it (CI runs it
in the Qwen3-VL environment: test_qwen3vl_venv.py)."""

import json

import pytest

pytest.importorskip("torchvision")
pytest.importorskip("sentence_transformers")

from _paths import M2KR_RUN  # noqa: E402
from _qwen3vl_reference import authors_inputs  # noqa: E402
from _retrieve_helpers import IMAGE_ONLY_QUERY  # noqa: E402
from tiny_models import build_tiny_qwen3_vl_reranker  # noqa: E402

from mmrhub.retrieve.data_loading import Row  # noqa: E402

POOL = 8  # candidates a query in the score tests


@pytest.fixture(scope="module")
def qwen_reranker(tmp_path_factory):
    """A tiny Qwen3-VL reranker in a folder whose own name gives the preset, as a downloaded copy's would."""
    models = tmp_path_factory.mktemp("models")
    return build_tiny_qwen3_vl_reranker(models / "build").rename(models / "Qwen3-VL-Reranker-tiny")


def load(model, shared: bool = True, **overrides):
    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    settings = ModelSettings(**overrides).resolve(str(model), "reranker")
    return Reranker(str(model), settings, shared_prefix=shared)


def sides(benchmark, folder=None):
    """(query Items, corpus Items) of a benchmark's data as the rerank reads them (rows' own instructions)."""
    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import load_side
    from mmrhub.retrieve.options import DataOptions

    data = DataOptions(benchmark, data_dir=folder and str(folder))
    queries, corpus = load_side(data, "queries"), load_side(data, "corpus")
    items = Items(queries.dataset, queries.table, "ignore", instructions=True)
    return items, Items(corpus.dataset, corpus.table, "ignore"), queries.ids, corpus.ids


def pools(query_count: int, corpus_count: int, size: int = POOL) -> list:
    """Each query's candidates: ``size`` corpus rows, different for each query, some shared between queries."""
    return [[(3 * query + k) % corpus_count for k in range(size)] for query in range(query_count)]


def scored(reranker, queries, corpus, pools, batch_size: int, chunk_queries: int = 4):
    """Every pair's score through the rerank's own batches (``PairBatches``, in one process), by (query, candidate);
    and how many pairs each path scored."""
    from mmrhub.retrieve.rerank.model import PairBatches
    from mmrhub.retrieve.rerank.pairs import chunks

    work = []
    for number, chunk in enumerate(chunks(pools, chunk_queries)):
        work.append((number, chunk.pairs, [len(str(c)) for _, c in chunk.pairs]))
    scores, paths = {}, {}
    for chunk, positions, batch, path in PairBatches(queries, corpus, work, reranker, batch_size):
        assert len(positions) <= batch_size
        for position, score in zip(positions, reranker.score(batch).tolist()):
            scores[work[chunk][1][position]] = score
        paths[path] = paths.get(path, 0) + len(positions)
    if reranker.shared_forward is not None:
        assert reranker.shared_forward.prefixes == {}  # every prefix freed after its query's last batch
    return scores, paths


def qwenlm_scores(model_folder, reranker, rows: list) -> list:
    """QwenLM's Qwen3VLReranker's score of each (query Row, candidate Row) pair, one pair at a time: their
    conversation and processor call (``_qwen3vl_reference``) on our prepared images (their qwen-vl-utils resize, tested
    equal in test_qwen3vl.py), the instruction their loader strips (image_i2t_eval.py:20; empty: their default,
    QR:351), sigmoid of the last hidden state times lm_head[yes] - lm_head[no] (qwen3_vl_reranker.py:120-137)."""
    import torch
    from transformers import AutoProcessor
    from transformers import Qwen3VLForConditionalGeneration

    from mmrhub.retrieve.presets import QWEN3_VL_RERANKER
    from mmrhub.retrieve.rerank.shared_inputs import images_of

    processor = AutoProcessor.from_pretrained(model_folder)
    model = Qwen3VLForConditionalGeneration.from_pretrained(model_folder).eval()
    vocab = processor.tokenizer.get_vocab()
    weight = model.lm_head.weight[vocab["yes"]] - model.lm_head.weight[vocab["no"]]
    scores = []
    for query, document in rows:
        sides = [(row.id, row.text or "", images_of(reranker.prepared(row).input)[0]) for row in (query, document)]
        instruction = (query.instruction or "").strip() or QWEN3_VL_RERANKER.query_instruction
        with torch.no_grad():
            last = model.model(**authors_inputs(processor, [tuple(sides)], instruction)).last_hidden_state[:, -1]
        scores.append(torch.sigmoid(last @ weight).item())
    return scores


def same_rankings(pools, first: dict, second: dict) -> None:
    from mmrhub.retrieve.rerank.pairs import reranked

    for query, pool in enumerate(pools):
        orders = [reranked(pool, [scores[query, c] for c in pool])[0] for scores in (first, second)]
        assert orders[0] == orders[1], query


@pytest.mark.slow  # four reranks of each sample's pools
@pytest.mark.parametrize("benchmark", ["mipr", "m2kr"])
def test_shared_prefix_scores_are_the_whole_pairs(qwen_reranker, mipr_dir, benchmark):
    """Batches of 1, 7 and 32 suffixes against each query's prefix score every pair as the whole pair does (batch
    7), within 1e-5 in float32, rank each pool alike, and give QwenLM's reranker's scores: MIPR (a query without a
    question among them) and M2KR (each query's own instruction; queries with and without a question)."""
    from mmrhub.benchmarks import M2KR
    from mmrhub.benchmarks import MIPR

    declaration, folder = (MIPR, mipr_dir["dir"]) if benchmark == "mipr" else (M2KR, None)
    queries, corpus, query_ids, corpus_ids = sides(declaration, folder)
    rows = queries.__getitems__(list(range(len(query_ids))))
    assert any(not row.text for row in rows) and any(row.text for row in rows)
    if benchmark == "m2kr":
        assert len({row.instruction for row in rows}) == 3 and any(row.instruction.endswith(" ") for row in rows)
    else:
        assert IMAGE_ONLY_QUERY in query_ids
    candidate_pools = pools(len(query_ids), len(corpus_ids))
    whole, paths = scored(load(qwen_reranker, shared=False), queries, corpus, candidate_pools, 7)
    assert paths == {"--no-shared-prefix": len(whole)}
    shared_reranker = load(qwen_reranker)
    assert shared_reranker.whole_because is None
    for batch_size in (1, 7, 32):
        shared, paths = scored(shared_reranker, queries, corpus, candidate_pools, batch_size)
        assert paths == {"shared prefix": len(whole)}
        assert shared.keys() == whole.keys()
        assert max(abs(shared[pair] - whole[pair]) for pair in whole) < 1e-5, batch_size
        same_rankings(candidate_pools, shared, whole)
    # QwenLM's reranker on each query's first two candidates, within the 1e-6 the whole path is held to
    checked = [(query, pool[k]) for query, pool in enumerate(candidate_pools) for k in range(2)]
    candidates = corpus.__getitems__([c for _, c in checked])
    theirs = qwenlm_scores(qwen_reranker, shared_reranker, [(rows[q], c) for (q, _), c in zip(checked, candidates)])
    assert max(abs(shared[pair] - score) for pair, score in zip(checked, theirs)) < 1e-6


def oblong_pairs():
    """(query, candidate) Rows of larger, oblong images (positions differ by row and column; several image sizes
    in a batch): photos with and without a question, screenshots with passages, an instruction with a trailing
    space."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)

    def noise(width, height):
        return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))

    queries = [
        Row(
            "q1",
            "这是什么地方",
            noise(320, 224),
            "Using the provided image, obtain documents that address the question: ",
        ),
        Row("q2", None, noise(192, 288), "Identify the person in the image and retrieve the document."),
    ]
    documents = [
        Row("d1", "A passage about a place " * 6, noise(256, 480)),
        Row("d2", "短文", noise(480, 160)),
        Row("d3", None, noise(96, 64)),
        Row("d4", "Another passage, longer than the others " * 9, noise(224, 640)),
    ]
    return [(query, document) for query in queries for document in documents]


class Table:
    """Rows as ``Items`` hands them to the rerank's batches (``__getitems__``)."""

    def __init__(self, rows):
        self.rows = rows

    def __getitems__(self, indices):
        return [self.rows[i] for i in indices]


def oblong_tables():
    """(queries, candidates, (query, candidate) row pairs) of ``oblong_pairs``: two queries, four candidates."""
    rows = oblong_pairs()
    return Table([rows[0][0], rows[4][0]]), Table([document for _, document in rows[:4]]), rows


def test_shared_prefix_scores_are_qwenlms(qwen_reranker):
    """On oblong images and each query's own instruction, the shared path's scores are QwenLM's Qwen3VLReranker's
    (their conversation, their processor call, sigmoid of the last hidden state times lm_head[yes] - lm_head[no]),
    within the 1e-6 the whole path is held to."""
    from mmrhub.retrieve.rerank.model import PairBatches

    reranker = load(qwen_reranker)
    queries, documents, rows = oblong_tables()
    pairs = [(q, d) for q in range(2) for d in range(4)]
    ours = {}
    for _, positions, batch, path in PairBatches(queries, documents, [(0, pairs, [0] * 8)], reranker, 3):
        assert path == "shared prefix"
        ours.update(zip(positions, reranker.score(batch).tolist()))

    theirs = qwenlm_scores(qwen_reranker, reranker, rows)
    assert max(abs(ours[i] - theirs[i]) for i in range(8)) < 1e-6


def test_prefix_and_suffix_tokens_and_pixels_are_the_whole_pairs(qwen_reranker):
    """The prefix's tokens followed by a suffix's are the whole pair's tokens, its images' pixels and grids the
    whole pair's, for every pair of a query (oblong images, with and without a question and a text)."""
    import torch

    from mmrhub.retrieve.rerank.shared_inputs import images_of

    reranker = load(qwen_reranker)
    sides_ = [(reranker.prepared(query), reranker.prepared(document)) for query, document in oblong_pairs()]
    for query in (0, 4):
        group = sides_[query : query + 4]
        prefix, suffixes, whole = reranker.shared.split(group)
        assert whole == {} and sorted(suffixes) == [0, 1, 2, 3]
        assert prefix.endswith("\n<Document>:") and "<Instruct>: " + group[0][0].instruction + "<Query>:" in prefix
        head = reranker.shared.features([prefix], images_of(group[0][0].input))
        tail = reranker.shared.features(
            [suffixes[i] for i in range(4)], [image for _, c in group for image in images_of(c.input)]
        )
        full = reranker.features(group)
        for row in range(4):
            mine = torch.cat([head["input_ids"][0], tail["input_ids"][row][tail["attention_mask"][row].bool()]])
            theirs = full["input_ids"][row][full["attention_mask"][row].bool()]
            assert torch.equal(mine, theirs), row
        grids = full["image_grid_thw"].view(4, 2, 3)
        assert torch.equal(head["image_grid_thw"][0], grids[0, 0]) and torch.equal(tail["image_grid_thw"], grids[:, 1])
        patches = full["image_grid_thw"].prod(-1).tolist()
        pieces = torch.split(full["pixel_values"], patches)
        assert torch.equal(head["pixel_values"], pieces[0])
        assert torch.equal(tail["pixel_values"], torch.cat(pieces[1::2]))


def test_the_cache_holds_the_prefix_expanded_without_a_copy(qwen_reranker):
    """The suffixes' cache holds views of the prefix's keys and values (one copy for all rows, stride 0 across
    them); batches of two queries interleaved, as several DataLoader workers deliver them, each continue their own
    prefix."""
    from mmrhub.retrieve.rerank.model import PairBatches
    from mmrhub.retrieve.rerank.shared_inputs import SharedBatch

    reranker = load(qwen_reranker)
    queries, documents, _ = oblong_tables()
    pairs = [(q, d) for q in range(2) for d in range(4)]
    made = list(PairBatches(queries, documents, [(0, pairs[:4], [0] * 4), (1, pairs[4:], [0] * 4)], reranker, 2))
    assert [len(batch.suffix["input_ids"]) for _, _, batch, _ in made] == [2, 2, 2, 2]
    assert [batch.prefix is not None for _, _, batch, _ in made] == [True, False, True, False]
    in_order = {}
    for chunk, positions, batch, _ in made:
        in_order.update({(chunk, p): s for p, s in zip(positions, reranker.score(batch).tolist())})
    forward = reranker.shared_forward
    interleaved = {}
    for chunk, positions, batch, _ in [made[0], made[2], made[1], made[3]]:
        interleaved.update({(chunk, p): s for p, s in zip(positions, reranker.score(batch).tolist())})
        if batch.prefix is not None:
            prefix = forward.prefixes[batch.query]
            keys = prefix.layers[0][0]
            cache = forward.expanded(prefix, 3)
            assert cache.layers[0].keys.data_ptr() == keys.data_ptr() and cache.layers[0].keys.stride(0) == 0
            assert cache.get_seq_length() == prefix.length
    assert interleaved == in_order and forward.prefixes == {}
    assert isinstance(made[0][2], SharedBatch)


def test_a_pair_the_token_budget_would_cut_runs_whole(qwen_reranker):
    """With a budget that cuts the longest candidate's text, that pair runs whole, cut as today's pairs are, and
    the rest share the prefix; every score is the whole path's."""
    from mmrhub.retrieve.rerank.model import PairBatches

    rows = oblong_pairs()[:4]
    budget = 700  # the pairs take 629, 446, 371 and 865 tokens: the fourth candidate's passage is cut
    shared, whole_path = load(qwen_reranker, max_length=budget), load(qwen_reranker, shared=False, max_length=budget)

    queries, documents = Table([rows[0][0]]), Table([document for _, document in rows])
    pairs = [(0, d) for d in range(4)]
    results = []
    for reranker in (shared, whole_path):
        scores, paths = {}, {}
        for _, positions, batch, path in PairBatches(queries, documents, [(0, pairs, [0] * 4)], reranker, 4):
            scores.update(zip(positions, reranker.score(batch).tolist()))
            paths[path] = paths.get(path, 0) + len(positions)
        results.append((scores, paths))
    (shared_scores, shared_paths), (whole_scores, whole_paths) = results
    assert shared_paths == {"shared prefix": 3, "token budget": 1} and whole_paths == {"--no-shared-prefix": 4}
    assert max(abs(shared_scores[i] - whole_scores[i]) for i in range(4)) < 1e-5


@pytest.mark.slow  # two reranks of the M2KR sample, one with two workers
def test_the_run_record_says_which_path_ran(tmp_path, qwen_reranker, capsys):
    """`rerank` says which path it takes and records it with how many pairs each path scored; --no-shared-prefix
    runs every pair whole, records why, and ranks the pools alike; two DataLoader workers deliver the shared
    batches as one process does."""
    from mmrhub.commands.rerank import build_parser
    from mmrhub.commands.rerank import rerank_options
    from mmrhub.retrieve.rerank.pipeline import run

    argv = ["m2kr", "--candidates", str(M2KR_RUN), "--model", str(qwen_reranker), "--no-cache", "--no-eval"]
    runs = {}
    for name, extra in (("shared", ["--num-workers", "2"]), ("whole", ["--num-workers", "0", "--no-shared-prefix"])):
        output = tmp_path / f"{name}.json"
        assert run(rerank_options(build_parser().parse_args([*argv, *extra, "--output", str(output)]))) == 0
        runs[name] = (json.loads(output.read_text()), json.loads((tmp_path / f"{name}.json.meta.json").read_text()))
    out = capsys.readouterr().out
    assert "[rerank] shared prefix: each query's image and prompt run once for all its candidates" in out
    assert "[rerank] whole pairs: --no-shared-prefix" in out
    (shared, shared_meta), (whole, whole_meta) = runs["shared"], runs["whole"]
    assert shared_meta["pairs"] == {
        "path": "shared prefix",
        "whole_pairs_because": None,
        "scored": {"shared prefix": 150},
        "cached": 0,
    }
    assert whole_meta["pairs"] == {
        "path": "whole pairs",
        "whole_pairs_because": "--no-shared-prefix",
        "scored": {"--no-shared-prefix": 150},
        "cached": 0,
    }
    assert (shared_meta["options"]["shared_prefix"], whole_meta["options"]["shared_prefix"]) == (True, False)
    for mine, theirs in zip(shared, whole):
        assert [item["did"] for item in mine["ranked"]] == [item["did"] for item in theirs["ranked"]]
        assert max(abs(a["score"] - b["score"]) for a, b in zip(mine["ranked"], theirs["ranked"])) < 1e-5


def test_prefix_and_suffix_pixels_sent_compact_reach_the_model_unchanged(qwen_reranker):
    """On CUDA the workers send a prefix's and a suffix's pixels as one frame of the image's bytes (as whole pairs'
    are: ``model_inputs.Compact``); the device gets the very values the processor makes, in the model's dtype."""
    import torch

    from mmrhub.retrieve.model_inputs import FRAMES_KEY
    from mmrhub.retrieve.model_inputs import Compact
    from mmrhub.retrieve.model_inputs import to_device
    from mmrhub.retrieve.rerank.shared_inputs import SharedInputs
    from mmrhub.retrieve.rerank.shared_inputs import images_of

    reranker = load(qwen_reranker)
    group = [(reranker.prepared(query), reranker.prepared(document)) for query, document in oblong_pairs()[:4]]
    prefix, suffixes, _ = reranker.shared.split(group)
    made = [
        ([prefix], images_of(group[0][0].input)),
        ([suffixes[i] for i in range(4)], [image for _, candidate in group for image in images_of(candidate.input)]),
    ]
    plain = [reranker.shared.features(texts, images) for texts, images in made]
    reranker.compact = Compact.for_model(reranker.model[0], "cuda", torch.bfloat16)
    compact = SharedInputs(reranker)
    for (texts, images), whole in zip(made, plain):
        sent = compact.features(texts, images)
        assert sent["pixel_values"].dtype == torch.uint8 and FRAMES_KEY in sent
        assert sent["pixel_values"].numel() * 2 == whole["pixel_values"].numel()
        restored = to_device(sent, "cpu", reranker.compact)
        assert torch.equal(restored["pixel_values"], whole["pixel_values"].to(torch.bfloat16))
        assert torch.equal(restored["input_ids"], whole["input_ids"])
