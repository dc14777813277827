"""Corpus embeddings on disk, keyed by model identity, encoder options and a data fingerprint.

Layout: ``<cache_dir>/<key>/embeddings.npy`` (float32, one row per corpus item, in corpus order) and
``manifest.json`` (everything the key was made from, plus row count and dimension).
"""

import hashlib
import json
from pathlib import Path

import numpy as np

from mmrhub.writing import npy_bytes
from mmrhub.writing import write_bytes
from mmrhub.writing import write_text


def default_dir() -> Path:
    """``$HF_HOME/mmrhub/embeddings``."""
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "mmrhub" / "embeddings"


def cache_key(encoder_identity: dict, data_fingerprint: str) -> str:
    """A folder name: the hash of what produced the cached values (model and options) and of the data."""
    material = json.dumps({"encoder": encoder_identity, "data": data_fingerprint}, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()[:24]


class EmbeddingCache:
    """The corpus embeddings of one encoder on one corpus, in their own folder under ``cache_dir``."""

    def __init__(self, cache_dir, encoder_identity: dict, data_fingerprint: str, num_items: int):
        self.manifest = {
            "encoder": encoder_identity,
            "data": data_fingerprint,
            "num_items": num_items,
        }
        self.folder = Path(cache_dir or default_dir()) / cache_key(encoder_identity, data_fingerprint)

    def load(self):
        """The cached (num_items, dim) float32 array, or None when absent or written for something else."""
        try:
            manifest = json.loads((self.folder / "manifest.json").read_text())
            array = np.load(self.folder / "embeddings.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        stored = {key: manifest.get(key) for key in self.manifest}
        if stored != self.manifest or array.shape != (self.manifest["num_items"], manifest.get("dim")):
            return None
        return np.array(array, dtype=np.float32)  # a writable copy, not the read-only map

    def save(self, embeddings: np.ndarray):
        """Write atomically: a crash mid-write leaves no half cache behind."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_bytes(self.folder / "embeddings.npy", npy_bytes(embeddings))
        manifest = dict(self.manifest, dim=int(embeddings.shape[1]))
        write_text(self.folder / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
