"""Corpus embeddings on disk, keyed by model identity, encoder options and a data fingerprint.

Each entry is a folder ``<cache_dir>/<key>/`` of ``mmr_cache``'s one format: ``embeddings.npy`` (float32, one row
per corpus item, in corpus order) and ``entry.json`` (the key, the file's size and hash, and everything the key was
made from, with row count and dimension). An entry that does not vouch for its bytes is embedded again.
"""

import logging
from pathlib import Path

import numpy as np

import mmr_cache
from mmrhub.retrieve.finite import all_finite
from mmrhub.writing import new_entry

logger = logging.getLogger(__name__)
FILE = "embeddings.npy"


def default_dir() -> Path:
    """``$HF_HOME/mmrhub/embeddings``."""
    return mmr_cache.cache_root("embeddings")


def cache_key(encoder_identity: dict, data_fingerprint: str) -> str:
    """A folder name: the hash of what produced the cached values (model and options) and of the data."""
    return mmr_cache.key_of({"encoder": encoder_identity, "data": data_fingerprint})


def save_entry(folder: Path, key: str, meta: dict, name: str, array: np.ndarray) -> bool:
    """Write one array as the entry ``key`` at ``folder``; False (and a warning saying why) when the cache cannot
    be written: the values are then computed again next time, and the command goes on."""
    try:
        with new_entry(folder, key, meta) as work:
            np.save(work / name, np.asarray(array, dtype=np.float32))
        return True
    except OSError as err:
        logger.warning("not cached: %s", mmr_cache.unusable(err, folder) or f"cannot write {folder}: {err}")
        return False


def load_entry(folder: Path, key: str, meta: dict, name: str):
    """(stored meta, float32 array: a writable copy) of the entry ``key`` at ``folder``, or None when absent,
    written for something else (its meta differs from ``meta``), or not vouching for its bytes."""
    entry = mmr_cache.read_entry(folder, key)
    if entry is None or not isinstance(entry[0], dict) or {k: entry[0].get(k) for k in meta} != meta:
        return None
    try:
        array = np.load(folder / name, mmap_mode="r")
    except (OSError, ValueError):
        return None
    if array.dtype != np.float32 or not all_finite(array):  # NaN values (an older mmrhub cached them) are never served
        return None
    return entry[0], np.array(array, dtype=np.float32)  # a writable copy, not the read-only map


class EmbeddingCache:
    """The corpus embeddings of one encoder on one corpus, in their own folder under ``cache_dir``."""

    def __init__(self, cache_dir, encoder_identity: dict, data_fingerprint: str, num_items: int):
        self.manifest = {
            "encoder": encoder_identity,
            "data": data_fingerprint,
            "num_items": num_items,
        }
        self.key = cache_key(encoder_identity, data_fingerprint)
        self.folder = Path(cache_dir or default_dir()) / self.key

    def load(self):
        """The cached (num_items, dim) float32 array, or None when absent, written for something else or damaged."""
        found = load_entry(self.folder, self.key, self.manifest, FILE)
        if found is None or found[1].shape != (self.manifest["num_items"], found[0].get("dim")):
            return None
        return found[1]

    def save(self, embeddings: np.ndarray) -> bool:
        """Write the entry whole (aside, then swapped in); False when the cache cannot be written (a warning)."""
        return save_entry(self.folder, self.key, dict(self.manifest, dim=int(embeddings.shape[1])), FILE, embeddings)
