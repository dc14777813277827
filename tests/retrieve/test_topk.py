import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the top-k search runs on torch tensors (the retrieve extra)")
pytest.importorskip(
    "threadpoolctl", reason="mmrhub.retrieve.topk bounds BLAS threads with threadpoolctl (the retrieve extra)"
)

from mmrhub.retrieve.encoders import fuse  # noqa: E402
from mmrhub.retrieve.topk import exact_topk  # noqa: E402
from mmrhub.retrieve.topk import faiss_topk  # noqa: E402
from mmrhub.retrieve.topk import pool_topk  # noqa: E402


def reference_topk(queries, corpus, k):
    """Brute force: every score, ordered by (score desc, index asc)."""
    scores = queries @ corpus.T
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores), axis=1)[:, :k]
    return np.take_along_axis(scores, order, 1), order


def unit(rows, dim, seed):
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("block_bytes", [None, 4 * 7 * 50])  # one block, or 7-query blocks
def test_exact_topk_matches_brute_force(block_bytes):
    queries, corpus = unit(23, 16, 0), unit(50, 16, 1)
    scores, indices = exact_topk(torch.from_numpy(queries), torch.from_numpy(corpus), 10, block_bytes=block_bytes)
    want_scores, want_indices = reference_topk(queries, corpus, 10)
    assert indices.shape == (23, 10)
    np.testing.assert_array_equal(indices.numpy(), want_indices)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=0, atol=1e-6)


def test_ties_keep_the_lowest_corpus_indices_across_corpus_blocks(monkeypatch):
    monkeypatch.setattr("mmrhub.retrieve.topk.MAX_CORPUS_BLOCK", 4)
    # 10 identical corpus rows: every score ties, so the answer must be indices 0..k-1 in order.
    corpus = torch.ones(10, 3) / 3**0.5
    queries = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    scores, indices = exact_topk(queries, corpus, 6)
    assert indices.tolist() == [[0, 1, 2, 3, 4, 5]] * 2
    assert torch.all(scores == scores[:, :1])


def test_tie_at_the_kth_place_inside_one_block():
    corpus = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.0, 1.0]])
    scores, indices = exact_topk(torch.tensor([[0.0, 1.0]]), corpus, 2)
    assert indices.tolist() == [[0, 2]]
    assert scores.tolist() == [[1.0, 1.0]]


def test_k_larger_than_corpus_returns_the_whole_corpus():
    scores, indices = exact_topk(torch.eye(3), torch.eye(3), 10)
    assert indices.tolist() == [[0, 1, 2], [1, 0, 2], [2, 0, 1]]


def test_pool_topk_ranks_only_the_pool_and_pads_last():
    corpus = torch.from_numpy(unit(30, 8, 2))
    queries = torch.from_numpy(unit(3, 8, 3))
    pools = torch.tensor([[5, 1, 9], [0, 29, -1], [7, -1, -1]])
    scores, indices = pool_topk(queries, corpus, pools, block_bytes=4 * 3 * 8)
    for row, pool in enumerate(pools.tolist()):
        pool = [i for i in pool if i >= 0]
        expected = sorted(pool, key=lambda i: -float(queries[row] @ corpus[i]))
        assert indices[row, : len(pool)].tolist() == expected
        assert indices[row, len(pool) :].tolist() == [-1] * (3 - len(pool))
        assert torch.isinf(scores[row, len(pool) :]).all()


def test_faiss_backend_agrees_with_torch():
    pytest.importorskip("faiss")
    queries, corpus = torch.from_numpy(unit(20, 32, 4)), torch.from_numpy(unit(200, 32, 5))
    want_scores, want_indices = exact_topk(queries, corpus, 15)
    scores, indices = faiss_topk(queries, corpus, 15)
    assert indices.tolist() == want_indices.tolist()
    torch.testing.assert_close(scores, want_scores, rtol=0, atol=1e-5)


def test_fusion_rule_and_image_only_rows():
    image = torch.tensor([[3.0, 0.0], [0.0, 2.0]])
    text = torch.tensor([[0.0, 5.0]])  # only row 0 has text
    fused = fuse(image, text, torch.tensor([True, False]), weight=0.5)
    torch.testing.assert_close(fused[0], torch.tensor([0.5**0.5, 0.5**0.5]))
    torch.testing.assert_close(fused[1], torch.tensor([0.0, 1.0]))  # image only: normalize(image)
    weighted = fuse(image, text, torch.tensor([True, False]), weight=0.25)
    torch.testing.assert_close(weighted[0], torch.nn.functional.normalize(torch.tensor([0.75, 0.25]), dim=0))
