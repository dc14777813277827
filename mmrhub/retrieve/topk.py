"""Exact inner-product top-k: chunked matrix products on the device (torch), or faiss ``IndexFlatIP``.

Results are ordered by score, then by corpus index, and ties at the k-th place keep the lowest indices, so
the answer does not depend on chunk sizes, on the device or on how many processes embedded the corpus.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from threadpoolctl import threadpool_limits

# Bytes of one block of scores: big enough for full-speed matrix products, small enough for any device.
BLOCK_BYTES = {"cpu": 256 << 20, "cuda": 2 << 30}
MAX_CORPUS_BLOCK = 1 << 20


def order_by_score(values, indices):
    """Sort each row by value descending, then index ascending."""
    indices, perm = indices.sort(dim=1)
    values = values.gather(1, perm)
    values, perm = values.sort(dim=1, descending=True, stable=True)
    return values, indices.gather(1, perm)


def block_topk(scores, k):
    """Top-k of one (queries x corpus block) score matrix, ties at the k-th place broken by lowest index."""
    if k >= scores.shape[1]:
        values, indices = scores.topk(k, dim=1)
        return order_by_score(values, indices)
    # One extra candidate tells whether the k-th place is tied; only such rows need a second look.
    values, indices = scores.topk(k + 1, dim=1)
    ambiguous = values[:, k - 1] == values[:, k]
    values, indices = values[:, :k].clone(), indices[:, :k].clone()
    for row in ambiguous.nonzero().flatten().tolist():
        kth = values[row, k - 1]
        above = (scores[row] > kth).nonzero().flatten()
        tied = (scores[row] == kth).nonzero().flatten()[: k - len(above)]
        indices[row] = torch.cat([above, tied])
        values[row] = scores[row, indices[row]]
    return order_by_score(values, indices)


def _matmul(queries, block, out):
    """queries @ block.T into ``out``. On CPU numpy's BLAS (OpenBLAS, like faiss's) is used: torch's MKL sgemm
    ran this shape slower (bench/topk_cpu.py; figures in bench/README.md)."""
    if queries.device.type == "cpu" and queries.dtype == torch.float32 and block.dtype == torch.float32:
        np.matmul(queries.numpy(), block.numpy().T, out=out.numpy())
        return out
    return torch.matmul(queries, block.T, out=out)


def exact_topk(queries: torch.Tensor, corpus: torch.Tensor, k: int, block_bytes=None):
    """(scores, indices), each (num_queries, min(k, num_corpus)), for float tensors on one device.

    On CPU the queries are split over one single-threaded BLAS + top-k pipeline per core: a multi-threaded BLAS
    leaves its threads spinning after each product, and they slow the following ``topk`` down (bench/topk_cpu.py;
    figures in bench/README.md, "Exact top-k on CPU"). Rows are independent, so the result is the same.
    """
    workers = min(torch.get_num_threads(), len(queries))
    if queries.device.type != "cpu" or workers < 2:
        return _exact_topk(queries, corpus, k, block_bytes)
    block_bytes = (block_bytes or BLOCK_BYTES["cpu"]) // workers
    threads = torch.get_num_threads()
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        torch.set_num_threads(1)
        try:
            parts = queries.tensor_split(workers)
            parts = list(pool.map(lambda part: _exact_topk(part, corpus, k, block_bytes), parts))
        finally:
            torch.set_num_threads(threads)
    return torch.cat([values for values, _ in parts]), torch.cat([indices for _, indices in parts])


def _exact_topk(queries: torch.Tensor, corpus: torch.Tensor, k: int, block_bytes=None):
    queries, corpus = queries.detach().contiguous(), corpus.detach().contiguous()
    num_queries, num_corpus = len(queries), len(corpus)
    k = min(k, num_corpus)
    block_bytes = block_bytes or BLOCK_BYTES.get(queries.device.type, BLOCK_BYTES["cuda"])
    corpus_block = min(num_corpus, MAX_CORPUS_BLOCK)
    query_block = max(1, block_bytes // (4 * corpus_block))
    # One score buffer, reused: fresh 100s-of-MB allocations per block cost page faults on CPU.
    buffer = torch.empty(min(query_block, num_queries) * corpus_block, dtype=queries.dtype, device=queries.device)
    all_values, all_indices = [], []
    for q0 in range(0, num_queries, query_block):
        q = queries[q0 : q0 + query_block]
        best = None
        for c0 in range(0, num_corpus, corpus_block):
            block = corpus[c0 : c0 + corpus_block]
            scores = _matmul(q, block, buffer[: len(q) * len(block)].view(len(q), len(block)))
            values, indices = block_topk(scores, min(k, len(block)))
            if best is not None:
                values, indices = order_by_score(torch.cat([best[0], values], 1), torch.cat([best[1], indices + c0], 1))
                values, indices = values[:, :k], indices[:, :k]
            best = (values, indices)
        all_values.append(best[0])
        all_indices.append(best[1])
    return torch.cat(all_values), torch.cat(all_indices)


def pool_topk(queries: torch.Tensor, corpus: torch.Tensor, pools: torch.Tensor, block_bytes=None):
    """Rank each query's candidate pool (row of corpus indices, -1 = padding): (scores, indices) of the same
    shape, padding last with index -1 and score -inf."""
    block_bytes = block_bytes or BLOCK_BYTES.get(queries.device.type, BLOCK_BYTES["cuda"])
    width = max(1, pools.shape[1])
    query_block = max(1, block_bytes // (4 * width * corpus.shape[1]))
    all_values, all_indices = [], []
    for q0 in range(0, len(queries), query_block):
        pool = pools[q0 : q0 + query_block]
        padding = pool < 0
        candidates = corpus[pool.clamp(min=0)]
        values = torch.bmm(candidates, queries[q0 : q0 + query_block, :, None])[..., 0]
        values = values.masked_fill(padding, float("-inf"))
        indices = pool.masked_fill(padding, torch.iinfo(pool.dtype).max)
        values, indices = order_by_score(values, indices)
        all_values.append(values)
        all_indices.append(indices.masked_fill(values == float("-inf"), -1))
    return torch.cat(all_values), torch.cat(all_indices)


def faiss_topk(queries: torch.Tensor, corpus: torch.Tensor, k: int):
    """faiss ``IndexFlatIP`` on CPU; exact, but ties come back in faiss's order."""
    import faiss

    corpus_np = np.ascontiguousarray(corpus.float().cpu().numpy())
    index = faiss.IndexFlatIP(corpus_np.shape[1])
    index.add(corpus_np)
    values, indices = index.search(np.ascontiguousarray(queries.float().cpu().numpy()), min(k, len(corpus_np)))
    return torch.from_numpy(values), torch.from_numpy(indices)
