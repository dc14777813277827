"""The (query, candidate) pairs of a rerank, cut into chunks, and the reranked order. Imports nothing heavy.

A chunk is ``chunk_queries`` consecutive queries with the first ``top_n`` candidates of each pool. Chunks and the
batches inside them do not depend on how many processes run or on what was cached, so every pair is scored in
the same batch, and gets the same score, whichever way the work is split.
"""

import hashlib
import json
from dataclasses import dataclass


@dataclass
class Chunk:
    """Consecutive queries' (query, candidate) pairs: the unit of batching, sharding and caching."""

    first_query: int  # row of its first query
    pairs: list  # (query row, corpus row), query by query, each pool in baseline order

    def key(self, query_ids, corpus_ids) -> str:
        """Content address of the chunk: the ids of its pairs, so a cached chunk is found whatever its position."""
        ids = [[query_ids[q], corpus_ids[c]] for q, c in self.pairs]
        return hashlib.sha256(json.dumps(ids, ensure_ascii=False).encode()).hexdigest()[:32]


def chunks(pools, chunk_queries: int, top_n=None) -> list:
    """pools: per query row, the corpus rows of its candidates in baseline order."""
    out = []
    for first in range(0, len(pools), chunk_queries):
        pairs = [(q, c) for q in range(first, min(first + chunk_queries, len(pools))) for c in pools[q][:top_n]]
        out.append(Chunk(first, pairs))
    return out


def shard(items: list, rank: int, world_size: int) -> list:
    """The rank-th contiguous slice: gathered in rank order, the slices are the list again."""
    return items[rank * len(items) // world_size : (rank + 1) * len(items) // world_size]


def batches(pair_lengths: list, batch_size: int) -> list:
    """Positions of one chunk's pairs grouped into batches, longest inputs first: pairs of similar length share a
    batch, so little of it is padding."""
    order = sorted(range(len(pair_lengths)), key=lambda i: -pair_lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def even_batches(lengths: list, batch_size: int) -> list:
    """Positions in ``lengths`` grouped longest first into as few batches of at most ``batch_size`` as hold them,
    their sizes as even as can be (50 by 16: 13, 13, 12, 12): one query's candidates against its shared prefix,
    each batch one forward pass, none a small remainder."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    count = -(-len(order) // batch_size)
    sizes = [len(order) // count + (i < len(order) % count) for i in range(count)] if count else []
    starts = [sum(sizes[:i]) for i in range(count)]
    return [order[start : start + size] for start, size in zip(starts, sizes)]


def reranked(pool: list, scores: list):
    """(ranked items, their scores): the scored head of the pool by score, ties by baseline rank, then the
    unscored tail in its baseline order, with no score."""
    head = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    items = [pool[i] for i in head] + list(pool[len(scores) :])
    return items, [float(scores[i]) for i in head] + [None] * (len(pool) - len(scores))
