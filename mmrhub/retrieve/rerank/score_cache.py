"""Scores of (query, candidate) pairs on disk, chunk by chunk, keyed like the embedding cache: reranker
identity (weights, options that change scores) and fingerprints of the queries and corpus.

Each chunk is an entry of ``mmr_cache``'s one format, ``<cache_dir>/<key>/chunks/<chunk key>/``: ``scores.npy``
(float32, the chunk's pairs in order) and ``entry.json`` (its key, the file's size and hash, what made it). Each is
written whole as soon as it is scored, so an interrupted rerank resumes after the last one; a chunk that does not
vouch for its bytes is scored again.
"""

from pathlib import Path

import numpy as np

import mmr_cache
from mmrhub.retrieve.embedding_cache import cache_key
from mmrhub.retrieve.embedding_cache import load_entry
from mmrhub.retrieve.embedding_cache import save_entry

FILE = "scores.npy"


def default_dir() -> Path:
    """``$HF_HOME/mmrhub/rerank``."""
    return mmr_cache.cache_root("rerank")


class ScoreCache:
    """The pair scores of one reranker on one benchmark's data, chunk by chunk, under ``cache_dir``."""

    def __init__(self, cache_dir, reranker_identity: dict, data_fingerprint: str):
        self.key = cache_key(reranker_identity, data_fingerprint)
        self.folder = Path(cache_dir or default_dir()) / self.key
        self.manifest = {"encoder": reranker_identity, "data": data_fingerprint}

    def _entry(self, chunk_key: str):
        return self.folder / "chunks" / chunk_key, mmr_cache.key_of(self.key, chunk_key)

    def load(self, chunk_key: str, num_pairs: int):
        """The chunk's scores, or None when absent, of another length, or not vouching for its bytes."""
        folder, key = self._entry(chunk_key)
        found = load_entry(folder, key, dict(self.manifest, num_pairs=num_pairs), FILE)
        return found[1] if found is not None and found[1].shape == (num_pairs,) else None

    def save(self, chunk_key: str, scores: np.ndarray) -> bool:
        """Write the chunk whole (aside, then swapped in); ranks write distinct chunks. False when the cache
        cannot be written (a warning)."""
        folder, key = self._entry(chunk_key)
        return save_entry(folder, key, dict(self.manifest, num_pairs=len(scores)), FILE, scores)
