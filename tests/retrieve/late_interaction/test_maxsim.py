import doctest
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="MaxSim search runs on torch tensors (the retrieve extra)")

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

from mmrhub.retrieve.late_interaction import maxsim  # noqa: E402
from mmrhub.retrieve.late_interaction.maxsim import PackedTokens  # noqa: E402
from mmrhub.retrieve.late_interaction.maxsim import concat  # noqa: E402
from mmrhub.retrieve.late_interaction.maxsim import maxsim_topk  # noqa: E402
from mmrhub.retrieve.late_interaction.maxsim import pack  # noqa: E402
from mmrhub.retrieve.late_interaction.maxsim import working_bytes  # noqa: E402


def test_the_two_passage_example_of_maxsim_topk_holds():
    """The docstring's example runs as written (as PyLate shows ``colbert_scores``)."""
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    (example,) = [test for test in finder.find(maxsim) if test.name.endswith("maxsim_topk")]
    assert len(example.examples) == 6
    assert runner.run(example).failed == 0


def unit(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_corpus(num, longest, dim, seed):
    """(vectors, mask): passages of 1..longest kept tokens, padding positions filled with noise."""
    rng = np.random.default_rng(seed)
    vectors = unit((num, longest, dim), seed)
    lengths = rng.integers(1, longest + 1, num)
    mask = np.arange(longest)[None, :] < lengths[:, None]
    # Kept tokens need not be at the front: shuffle each row's positions.
    for row in mask:
        rng.shuffle(row)
    return vectors, mask


def brute_force(queries, query_mask, vectors, mask, k):
    """Every (query, passage) MaxSim with numpy, ordered by (score desc, index asc)."""
    scores = np.zeros((len(queries), len(vectors)), dtype=np.float64)
    for q, (query, qmask) in enumerate(zip(queries, query_mask)):
        for p, (passage, pmask) in enumerate(zip(vectors, mask)):
            scores[q, p] = (query[qmask].astype(np.float64) @ passage[pmask].T.astype(np.float64)).max(1).sum()
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores), axis=1)[:, :k]
    return np.take_along_axis(scores, order, 1), order


def search(queries, query_mask, vectors, mask, k, **kwargs):
    packed = pack(torch.from_numpy(vectors), torch.from_numpy(mask), dtype=torch.float32)
    return maxsim_topk(torch.from_numpy(queries), torch.from_numpy(query_mask), packed, k, **kwargs)


@pytest.fixture(scope="module")
def data():
    vectors, mask = random_corpus(60, 9, 16, 1)
    queries, query_mask = random_corpus(11, 5, 16, 2)
    return queries, query_mask, vectors, mask


@pytest.mark.parametrize("k", [1, 7, 60, 100])
def test_maxsim_topk_equals_brute_force(data, k):
    scores, indices = search(*data, k)
    want_scores, want_indices = brute_force(*data, k)
    assert indices.shape == (11, min(k, 60)) and scores.dtype == torch.float32
    np.testing.assert_array_equal(indices.numpy(), want_indices)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=0, atol=2e-6)


@pytest.mark.parametrize("budget", [None, 1 << 16, 40_000, 12_000])
def test_results_do_not_depend_on_the_chunk_sizes(data, budget):
    queries, query_mask, vectors, mask = data
    whole = search(*data, 10)
    chunked = search(*data, 10, budget_bytes=budget)
    np.testing.assert_array_equal(chunked[1].numpy(), whole[1].numpy())
    # Other query blocks are other matrix shapes: BLAS may round a product differently, by an ulp of the sum.
    np.testing.assert_allclose(chunked[0].numpy(), whole[0].numpy(), rtol=4e-7, atol=0)


def test_small_budgets_do_make_many_chunks(data):
    queries, query_mask, vectors, mask = data
    query_block, chunk_tokens = maxsim.plan(11, 5, 9, 10, 4, 16, 12_000)
    assert query_block < 11 and 9 <= chunk_tokens < int(mask.sum())


def test_chunks_group_similar_lengths_in_corpus_order_within_the_padded_budget():
    lengths = np.random.default_rng(5).integers(1, 40, 500)
    chunks = maxsim.chunks_by_length(lengths, 120)
    assert sorted(np.concatenate(chunks).tolist()) == list(range(500))  # every passage once
    assert all((np.diff(chunk) > 0).all() for chunk in chunks)  # corpus order inside a chunk
    assert all(len(chunk) * lengths[chunk].max() <= 120 for chunk in chunks)
    # similar lengths share a chunk: padding adds little to the kept tokens
    padded = sum(len(chunk) * lengths[chunk].max() for chunk in chunks)
    assert padded < 1.1 * lengths.sum()
    assert [len(c) for c in maxsim.chunks_by_length(np.array([5, 1, 5, 2]), 10)] == [2, 2]


def test_ties_keep_the_lowest_corpus_indices_across_chunks():
    # 12 passages, two distinct ones repeated; values in quarters so every sum is exact in any order.
    a = np.array([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5]], dtype=np.float32)
    b = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    vectors = np.stack([a if i % 3 else b for i in range(12)])
    mask = np.ones((12, 2), dtype=bool)
    queries = np.array([[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]], dtype=np.float32)
    query_mask = np.ones((1, 2), dtype=bool)
    for budget in (None, 1500):
        scores, indices = search(queries, query_mask, vectors, mask, 5, budget_bytes=budget)
        # a scores 1 + 0.5 = 1.5 at 1, 2, 4, 5, 7, ...; b scores 0 + 1 = 1.
        assert indices.tolist() == [[1, 2, 4, 5, 7]]
        assert scores.tolist() == [[1.5] * 5]
    scores, indices = search(queries, query_mask, vectors, mask, 10)
    assert indices.tolist() == [[1, 2, 4, 5, 7, 8, 10, 11, 0, 3]]


def test_masked_query_tokens_do_not_count():
    vectors = np.array([[[1.0, 0.0], [0.0, 1.0]]], dtype=np.float32)
    queries = np.array([[[1.0, 0.0], [0.0, 1.0]]], dtype=np.float32)
    scores, _ = search(queries, np.array([[True, False]]), vectors, np.ones((1, 2), dtype=bool), 1)
    assert scores.tolist() == [[1.0]]


def test_a_query_that_keeps_no_token_is_refused_by_its_position(data):
    queries, query_mask, vectors, mask = data
    query_mask = query_mask.copy()
    query_mask[3] = False
    with pytest.raises(ValueError, match=r"^query 3 keeps no token \(its mask is all False\): it cannot be scored$"):
        search(queries, query_mask, vectors, mask, 5)


def test_a_passage_that_keeps_no_token_is_refused_by_its_position():
    mask = torch.tensor([[True, False], [False, False]])
    with pytest.raises(ValueError, match=r"^passage 1 of this batch keeps no token \(its mask is all False\)$"):
        pack(torch.zeros(2, 2, 3), mask)


def test_pack_keeps_the_kept_tokens_in_order_and_concat_joins_batches():
    vectors = torch.arange(2 * 3 * 2, dtype=torch.float32).view(2, 3, 2)
    mask = torch.tensor([[True, False, True], [False, True, False]])
    packed = pack(vectors, mask)
    assert packed.vectors.tolist() == [[0, 1], [4, 5], [8, 9]]
    assert packed.offsets.tolist() == [0, 2, 3] and packed.vectors.dtype == torch.float32
    joined = concat([packed, pack(vectors[:1], mask[:1])])
    assert joined.offsets.tolist() == [0, 2, 3, 5] and len(joined) == 3
    assert joined.vectors[3:].tolist() == [[0, 1], [4, 5]]


def test_passages_are_half_on_cuda_and_float32_elsewhere():
    assert maxsim.passage_dtype("cuda") == torch.float16
    assert maxsim.passage_dtype("cuda:1") == torch.float16
    assert maxsim.passage_dtype("cpu") == torch.float32
    assert maxsim.PASSAGE_DTYPE_SOURCE.startswith("LinWeizheDragon/FLMR flmr/models/flmr/modeling_flmr.py:1338")


def test_bad_offsets_are_refused():
    with pytest.raises(ValueError, match="passage 1 keeps no token"):
        PackedTokens(torch.zeros(2, 4), torch.tensor([0, 2, 2]))
    with pytest.raises(ValueError, match="offsets must run from 0 to 2"):
        PackedTokens(torch.zeros(2, 4), torch.tensor([0, 1, 3]))


def test_a_budget_too_small_for_the_longest_passage_is_refused(data):
    with pytest.raises(ValueError, match=r"cannot hold one query and the longest passage \(9 tokens\): it needs"):
        search(*data, 5, budget_bytes=500)


def test_half_passages_differ_from_float32_by_less_than_their_rounding(data):
    """float16 vectors (as on a GPU) move each score by about 1e-3 for unit vectors of 16 dims, 5 query tokens."""
    queries, query_mask, vectors, mask = data
    exact = search(*data, 60)
    half = maxsim_topk(
        torch.from_numpy(queries),
        torch.from_numpy(query_mask),
        pack(torch.from_numpy(vectors), torch.from_numpy(mask), dtype=torch.float16),
        60,
    )
    by_index = np.zeros((11, 60))
    np.put_along_axis(by_index, exact[1].numpy(), exact[0].numpy(), 1)
    half_by_index = np.zeros((11, 60))
    np.put_along_axis(half_by_index, half[1].numpy(), half[0].numpy(), 1)
    difference = np.abs(half_by_index - by_index).max()
    assert 0 < difference < 5 * 2**-11 * 2  # at most 5 query tokens, each off by ~2 half-precision ulps of 1


class Allocations(TorchDispatchMode):
    """Every storage that torch operators allocate while active: the peak of their summed bytes alive at once
    (storages that existed before, like the inputs, are not counted)."""

    def __init__(self, known):
        super().__init__()
        self.known = {tensor.untyped_storage().data_ptr() for tensor in known}
        self.holders = {}
        self.alive = 0
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor):
                self.track(tensor)
        return out

    def track(self, tensor):
        key = tensor.untyped_storage().data_ptr()
        if key in self.known or tensor.untyped_storage().nbytes() == 0:
            return
        if key not in self.holders:
            self.holders[key] = 0
            self.alive += tensor.untyped_storage().nbytes()
            self.peak = max(self.peak, self.alive)
        self.holders[key] += 1
        weakref.finalize(tensor, self.release, key, tensor.untyped_storage().nbytes())

    def release(self, key, nbytes):
        self.holders[key] -= 1
        if self.holders[key] == 0:
            del self.holders[key]
            self.alive -= nbytes


@pytest.mark.parametrize("budget", [30_000, 120_000])
def test_what_the_search_allocates_stays_under_the_stated_bound(budget):
    vectors, mask = random_corpus(80, 12, 32, 3)
    queries, query_mask = random_corpus(20, 6, 32, 4)
    packed = pack(torch.from_numpy(vectors), torch.from_numpy(mask), dtype=torch.float32)
    queries, query_mask = torch.from_numpy(queries), torch.from_numpy(query_mask)
    query_block, chunk_tokens = maxsim.plan(20, 6, int(packed.lengths.max()), 10, 4, 32, budget)
    bound = working_bytes(query_block, 6, chunk_tokens, 10, 4, 32)
    assert bound <= budget
    with Allocations([packed.vectors, packed.offsets, queries, query_mask]) as allocations:
        maxsim_topk(queries, query_mask, packed, 10, budget_bytes=budget)
    # The results (20 x 10 scores and indices) and the ignored-token mask stay alive through the search.
    resident = 20 * 10 * 12 * 2 + 20 * 6 + packed.lengths.nbytes
    assert bound // 4 < allocations.peak <= bound + resident


def test_the_m2kr_corpus_fits_in_about_6_gb_of_half_vectors():
    """The worst case: every one of the 47,318 passages keeps 512 tokens; 6,415 queries of 320 tokens, top 100."""
    offsets = torch.arange(0, 47_318 * 512 + 1, 512)
    packed = PackedTokens(torch.empty(47_318 * 512, 128, dtype=torch.float16, device="meta"), offsets)
    assert 6.2e9 < packed.nbytes < 6.21e9
    resident = maxsim.resident_bytes(packed, 6415, 320, 100)
    query_block, chunk_tokens = maxsim.plan(6415, 320, 512, 100, 2, 128, maxsim.BUDGET_BYTES["cuda"])
    # Queries in half: 6,415 x 320 x (128 x 2 + 1) bytes = 0.53 GB; the search's working set: the 2 GiB budget.
    assert 6.73e9 < resident < 6.74e9
    assert working_bytes(query_block, 320, chunk_tokens, 100, 2, 128) <= 2 << 30 and chunk_tokens > 30_000


def test_ties_between_passages_of_other_lengths_keep_the_lowest_indices():
    # a passage and the same with its last token repeated score alike; chunks group them apart by length
    x, y = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    short, long = [x, y, y], [x, y, y]
    vectors = np.array([long if i % 2 == 0 else short for i in range(10)], dtype=np.float32)
    mask = np.array([[True, True, i % 2 == 0] for i in range(10)])
    queries = np.array([[x, y]], dtype=np.float32)
    for budget in (None, 2_000, 3_000):
        scores, indices = search(queries, np.ones((1, 2), dtype=bool), vectors, mask, 4, budget_bytes=budget)
        assert indices.tolist() == [[0, 1, 2, 3]] and scores.tolist() == [[2.0] * 4]
