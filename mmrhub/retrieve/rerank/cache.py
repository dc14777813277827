"""Scores of (query, candidate) pairs on disk, chunk by chunk, keyed like the embedding cache: reranker
identity (weights, options that change scores) and fingerprints of the queries and corpus.

Layout: ``<cache_dir>/<key>/manifest.json`` and ``chunks/<chunk key>.npy`` (float32, the chunk's pairs in order).
Each chunk is written atomically as soon as it is scored, so an interrupted rerank resumes after the last one.
"""

import json
from pathlib import Path

import numpy as np

from mmrhub.retrieve.cache import cache_key
from mmrhub.writing import npy_bytes
from mmrhub.writing import write_bytes
from mmrhub.writing import write_text


def default_dir() -> Path:
    """``$HF_HOME/mmrhub/rerank``."""
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "mmrhub" / "rerank"


class ScoreCache:
    """The pair scores of one reranker on one benchmark's data, chunk by chunk, under ``cache_dir``."""

    def __init__(self, cache_dir, reranker_identity: dict, data_fingerprint: str):
        self.folder = Path(cache_dir or default_dir()) / cache_key(reranker_identity, data_fingerprint)
        self.manifest = {"encoder": reranker_identity, "data": data_fingerprint}

    def load(self, chunk_key: str, num_pairs: int):
        """The chunk's scores, or None when absent or of another length."""
        try:
            scores = np.load(self.folder / "chunks" / f"{chunk_key}.npy")
        except (OSError, ValueError):
            return None
        return scores if scores.shape == (num_pairs,) else None

    def save(self, chunk_key: str, scores: np.ndarray):
        """Write atomically (a crash mid-write leaves no half chunk); ranks write distinct chunks."""
        folder = self.folder / "chunks"
        folder.mkdir(parents=True, exist_ok=True)
        manifest = self.folder / "manifest.json"
        if not manifest.exists():
            write_text(manifest, json.dumps(self.manifest, indent=1, sort_keys=True))
        write_bytes(folder / f"{chunk_key}.npy", npy_bytes(scores))
