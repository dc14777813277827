"""Exact late-interaction (MaxSim) search over packed token vectors.

score(query, passage) = the sum, over the query's kept tokens, of the largest inner product with any of the
passage's kept tokens. Every passage is scored (no index, no pruning: the authors of PreFLMR search an approximate
PLAID index instead), in chunks of passages of similar length on the device (``chunks_by_length``), and results are
ordered as ``topk`` orders them: by score, then corpus index, ties at the k-th place keeping the lowest indices.

Only kept tokens are stored (``pack``): 47,318 passages x 512 tokens x 128 dims is 6.2 GB in float16 at most.
The search's own allocations stay under ``working_bytes`` (checked by a test that records every allocation).
"""

from dataclasses import dataclass

import numpy as np
import torch

from mmrhub.retrieve.topk import block_topk
from mmrhub.retrieve.topk import order_by_score

# The authors cast passage vectors to half on a GPU; we do the same on CUDA and keep float32 on CPU, where half
# matrix products are slow and gain nothing.
PASSAGE_DTYPE_SOURCE = (
    "LinWeizheDragon/FLMR flmr/models/flmr/modeling_flmr.py:1338-1339 (`if self.use_gpu: D = D.half()`)"
)
# Bytes the search may allocate at once, besides the packed corpus and the queries themselves.
BUDGET_BYTES = {"cpu": 256 << 20, "cuda": 2 << 30}
# Query tokens scored together: enough columns for full-speed products, while chunks stay many passages long.
QUERY_TOKENS_PER_BLOCK = 8192


def passage_dtype(device) -> torch.dtype:
    """float16 on CUDA (as the authors' code, ``PASSAGE_DTYPE_SOURCE``), float32 elsewhere."""
    return torch.float16 if torch.device(device).type == "cuda" else torch.float32


@dataclass(frozen=True)
class PackedTokens:
    """The kept token vectors of ``n`` passages, back to back: passage ``i`` owns rows ``offsets[i]:offsets[i+1]``
    of ``vectors`` (total_kept, dim). ``offsets`` is int64 on CPU, starts at 0, and grows strictly (no passage
    is empty)."""

    vectors: torch.Tensor
    offsets: torch.Tensor

    def __post_init__(self):
        offsets = self.offsets
        if offsets.dtype != torch.int64 or offsets.ndim != 1 or len(offsets) < 1:
            raise ValueError(
                f"offsets must be a 1-D int64 tensor of n + 1 positions, got {offsets.dtype} {tuple(offsets.shape)}"
            )
        if offsets[0] != 0 or offsets[-1] != len(self.vectors):
            raise ValueError(
                f"offsets must run from 0 to {len(self.vectors)} (the rows of vectors), got {offsets[0]}..{offsets[-1]}"
            )
        empty = (offsets[1:] <= offsets[:-1]).nonzero().flatten()
        if len(empty):
            raise ValueError(f"passage {int(empty[0])} keeps no token: every passage needs at least one vector")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> torch.Tensor:
        """Each passage's kept token count (int64, CPU)."""
        return self.offsets.diff()

    @property
    def nbytes(self) -> int:
        """Bytes of the vectors and offsets."""
        return self.vectors.nbytes + self.offsets.nbytes

    def to(self, device=None, dtype=None) -> "PackedTokens":
        """The same passages with their vectors on ``device`` in ``dtype`` (offsets stay on CPU)."""
        return PackedTokens(self.vectors.to(device=device, dtype=dtype), self.offsets)


def pack(vectors: torch.Tensor, mask: torch.Tensor, dtype=None) -> PackedTokens:
    """Keep the tokens of (batch, tokens, dim) ``vectors`` where the (batch, tokens) bool ``mask`` is True, in
    order, cast to ``dtype`` (default: ``passage_dtype`` of their device)."""
    if vectors.ndim != 3 or mask.shape != vectors.shape[:2]:
        raise ValueError(
            "pack takes vectors (batch, tokens, dim) and a (batch, tokens) mask, "
            f"got {tuple(vectors.shape)} and {tuple(mask.shape)}"
        )
    mask = mask.to(device=vectors.device, dtype=torch.bool)
    empty = (~mask.any(1)).nonzero().flatten()
    if len(empty):
        raise ValueError(f"passage {int(empty[0])} of this batch keeps no token (its mask is all False)")
    lengths = mask.sum(1).cpu()
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
    dtype = dtype or passage_dtype(vectors.device)
    return PackedTokens(vectors[mask].to(dtype), offsets)


def concat(parts: list) -> PackedTokens:
    """The passages of ``parts`` (PackedTokens of one dim, dtype and device), in order."""
    ends = torch.tensor([0] + [int(part.offsets[-1]) for part in parts[:-1]]).cumsum(0)
    offsets = [parts[0].offsets[:1]] + [part.offsets[1:] + end for part, end in zip(parts, ends)]
    return PackedTokens(torch.cat([part.vectors for part in parts]), torch.cat(offsets))


def working_bytes(query_block: int, query_tokens: int, chunk_tokens: int, k: int, itemsize: int, dim: int) -> int:
    """An upper bound on what one query block x passage chunk step allocates, in bytes, for ``query_block``
    queries of ``query_tokens`` tokens, a chunk of passages padded to at most ``chunk_tokens`` tokens (so at most
    as many passages), top-``k``, vectors of ``dim`` values of ``itemsize`` bytes:

        chunk_tokens x query_block x query_tokens x (2 itemsize + 4)   token scores, best per passage, float32 sums
      + chunk_tokens x (dim x itemsize + 16)                           the chunk's padded tokens and their rows
      + query_block x chunk_tokens x 8                                 passage scores and their transpose (float32)
      + query_block x (k + 1) x 96                                     top-k candidates, merged and sorted

    Not counted: the packed corpus, the queries and the results (``resident_bytes``).
    """
    columns = query_block * query_tokens
    return (
        chunk_tokens * columns * (2 * itemsize + 4)
        + chunk_tokens * (dim * itemsize + 16)
        + query_block * chunk_tokens * 8
        + query_block * (k + 1) * 96
    )


def resident_bytes(packed: PackedTokens, num_queries: int, query_tokens: int, k: int) -> int:
    """What the search holds for its whole length: the packed corpus, the queries in its dtype, the results."""
    itemsize = packed.vectors.element_size()
    return packed.nbytes + num_queries * query_tokens * (packed.vectors.shape[1] * itemsize + 1) + num_queries * k * 12


def plan(num_queries: int, query_tokens: int, longest: int, k: int, itemsize: int, dim: int, budget: int) -> tuple:
    """(query_block, chunk_tokens) with ``working_bytes`` <= ``budget`` and chunks that hold the ``longest``
    passage; a budget too small for one query and that passage is refused."""
    query_block = max(1, min(num_queries, QUERY_TOKENS_PER_BLOCK // max(1, query_tokens)))
    while True:
        fixed = working_bytes(query_block, query_tokens, 0, k, itemsize, dim)
        per_token = working_bytes(query_block, query_tokens, 1, k, itemsize, dim) - fixed
        chunk_tokens = (budget - fixed) // per_token
        if chunk_tokens >= longest:
            return query_block, int(chunk_tokens)
        if query_block == 1:
            need = working_bytes(1, query_tokens, longest, k, itemsize, dim)
            raise ValueError(
                f"a MaxSim budget of {budget} bytes cannot hold one query and the longest passage "
                f"({longest} tokens): it needs {need}"
            )
        query_block = max(1, query_block // 2)


def chunks_by_length(lengths: np.ndarray, chunk_tokens: int) -> list:
    """The passages in chunks of similar length, each chunk's count x its longest length <= ``chunk_tokens`` (so
    padding to the longest wastes little), each chunk's passages in corpus order (so that a tie inside a chunk
    keeps the lowest corpus index, as ``topk.block_topk`` keeps the lowest position)."""
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    chunks, start = [], 0
    while start < len(order):
        # count x longest grows with count (the lengths ascend): the largest count that fits, by bisection
        low, high = 1, len(order) - start
        while low < high:
            middle = (low + high + 1) // 2
            if middle * ordered[start + middle - 1] <= chunk_tokens:
                low = middle
            else:
                high = middle - 1
        chunks.append(np.sort(order[start : start + low]))
        start += low
    return chunks


def check_queries(queries: torch.Tensor, query_mask: torch.Tensor, packed: PackedTokens):
    """Refuse queries of the wrong shape or dims, or one that keeps no token, naming it."""
    if queries.ndim != 3 or query_mask.shape != queries.shape[:2]:
        raise ValueError(
            "MaxSim takes queries (n, tokens, dim) and a (n, tokens) mask, "
            f"got {tuple(queries.shape)} and {tuple(query_mask.shape)}"
        )
    if queries.shape[2] != packed.vectors.shape[1]:
        raise ValueError(f"queries have {queries.shape[2]} dims but the passages have {packed.vectors.shape[1]}")
    empty = (~query_mask.bool().any(1)).nonzero().flatten()
    if len(empty):
        raise ValueError(f"query {int(empty[0])} keeps no token (its mask is all False): it cannot be scored")


def maxsim_topk(queries: torch.Tensor, query_mask: torch.Tensor, packed: PackedTokens, k: int, budget_bytes=None):
    """(scores float32, indices int64), each (num_queries, min(k, len(packed))): exact MaxSim top-k of every
    query over every passage, on the device of ``packed.vectors``, in its dtype (summed in float32).

    One query of two kept tokens (its third is padding) against two passages: each query token takes its best
    inner product with any of a passage's tokens, and the two bests are summed.

    >>> import torch
    >>> query = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [9.0, 9.0]]])
    >>> kept = torch.tensor([[True, True, False]])
    >>> passages = pack(
    ...     torch.tensor([[[1.0, 0.0], [0.6, 0.8]], [[0.0, 1.0], [0.0, 0.0]]]),  # passage 1 keeps one token
    ...     torch.tensor([[True, True], [True, False]]),
    ... )
    >>> scores, indices = maxsim_topk(query, kept, passages, k=2)
    >>> scores, indices  # passage 0: 1.0 + 0.8; passage 1: 0.0 + 1.0
    (tensor([[1.8000, 1.0000]]), tensor([[0, 1]]))
    """
    check_queries(queries, query_mask, packed)
    vectors = packed.vectors
    device, dtype = vectors.device, vectors.dtype
    queries = queries.detach().to(device=device, dtype=dtype)
    ignored = ~query_mask.to(device=device, dtype=torch.bool)
    num_queries, query_tokens = ignored.shape
    k = min(k, len(packed))
    lengths = packed.lengths.numpy()
    budget = budget_bytes or BUDGET_BYTES.get(device.type, BUDGET_BYTES["cuda"])
    itemsize, dim = vectors.element_size(), vectors.shape[1]
    query_block, chunk_tokens = plan(num_queries, query_tokens, int(lengths.max()), k, itemsize, dim, budget)
    chunks = [
        (torch.from_numpy(members).to(device), packed.offsets[members].to(device), packed.lengths[members].to(device))
        for members in chunks_by_length(lengths, chunk_tokens)
    ]
    all_values, all_indices = [], []
    for q0 in range(0, num_queries, query_block):
        block = queries[q0 : q0 + query_block]
        columns = block.reshape(-1, block.shape[2])
        best = None
        for members, starts, chunk_lengths in chunks:
            scores = chunk_scores(vectors, starts, chunk_lengths, columns, ignored[q0 : q0 + query_block])
            values, positions = block_topk(scores, min(k, len(members)))
            indices = members[positions]
            if best is not None:
                values, indices = order_by_score(torch.cat([best[0], values], 1), torch.cat([best[1], indices], 1))
                values, indices = values[:, :k], indices[:, :k]
            best = (values, indices)
        all_values.append(best[0])
        all_indices.append(best[1])
    return torch.cat(all_values).float(), torch.cat(all_indices)


def chunk_scores(vectors, starts, lengths, columns, ignored) -> torch.Tensor:
    """(queries, passages) float32 MaxSim of one chunk: the passages whose packed rows start at ``starts`` and run
    ``lengths``, against ``columns`` (the query block's tokens, flattened), ``ignored`` their (queries, tokens)
    padding and masked positions. Each passage is padded to the chunk's longest by repeating its last token, which
    leaves its max unchanged: one dense product and one max, no scatter."""
    width = int(lengths.max())
    rows = starts[:, None] + torch.minimum(torch.arange(width, device=starts.device)[None, :], lengths[:, None] - 1)
    tokens = vectors[rows.flatten()]  # (passages x width, dim)
    del rows
    token_scores = (tokens @ columns.T).view(len(starts), width, columns.shape[0])
    del tokens
    best = token_scores.amax(1)  # (passages, query tokens)
    del token_scores
    best = best.view(len(starts), *ignored.shape).float().masked_fill_(ignored, 0)
    return best.sum(2).T.contiguous()
