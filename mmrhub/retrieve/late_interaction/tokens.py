"""Token vectors in the pipeline: what is kept of each batch, gathered over the processes, and cached.

A late-interaction encoder's ``encode(batch, role)`` returns every token's vector and which tokens are kept:
(n, tokens, dim) and (n, tokens) bool. Each corpus batch is packed as it comes (``maxsim.pack``: kept tokens only,
float16 on CUDA), so the padded vectors of the whole corpus never exist at once; the packed corpus is gathered over
the processes and cached (``TokenCache``); queries stay padded.
"""

import json
import logging
from pathlib import Path

import numpy as np
import torch

import mmr_cache
from mmrhub.retrieve import distributed
from mmrhub.retrieve.embedding_cache import cache_key
from mmrhub.retrieve.embedding_cache import default_dir
from mmrhub.retrieve.finite import all_finite
from mmrhub.retrieve.late_interaction.maxsim import PackedTokens
from mmrhub.retrieve.late_interaction.maxsim import concat
from mmrhub.retrieve.late_interaction.maxsim import pack
from mmrhub.writing import new_entry

logger = logging.getLogger(__name__)


class CorpusTokens:
    """What ``pipeline.embed`` keeps of corpus batches: each packed as it comes, then all gathered in order."""

    def __init__(self, encoder, context):
        self.dtype, self.context = encoder.passage_dtype, context

    def each(self, output) -> PackedTokens:
        """One batch's packed kept tokens."""
        vectors, kept = output
        return pack(vectors, kept, self.dtype)

    def join(self, parts: list) -> PackedTokens:
        """Every rank's passages, in corpus order."""
        return gather_packed(concat(parts), self.context)


class QueryTokens:
    """What ``pipeline.embed`` keeps of query batches: (vectors float32, kept bool), padded to the longest."""

    def __init__(self, context):
        self.context = context

    def each(self, output) -> tuple:
        """One batch's vectors and kept mask."""
        vectors, kept = output
        return vectors.float(), kept.bool()

    def join(self, parts: list) -> tuple:
        """(n, tokens, dim) vectors and (n, tokens) kept of every rank's queries, in order."""
        width = distributed.largest(max(vectors.shape[1] for vectors, _ in parts), self.context)
        vectors = torch.cat([padded(vectors, width) for vectors, _ in parts])
        kept = torch.cat([padded(kept, width) for _, kept in parts])
        return distributed.gather_rows(vectors, self.context), distributed.gather_rows(kept, self.context)


def padded(tensor: torch.Tensor, width: int) -> torch.Tensor:
    """``tensor`` with its second dimension zero-padded (False for masks) to ``width``."""
    if tensor.shape[1] == width:
        return tensor
    out = tensor.new_zeros((tensor.shape[0], width, *tensor.shape[2:]))
    out[:, : tensor.shape[1]] = tensor
    return out


def gather_packed(packed: PackedTokens, context) -> PackedTokens:
    """Every rank's packed passages concatenated in rank order (contiguous shards: the corpus's order)."""
    if not context.distributed:
        return packed
    vectors = distributed.gather_rows(packed.vectors, context)
    lengths = distributed.gather_rows(packed.lengths.to(packed.vectors.device), context).cpu()
    return PackedTokens(vectors, torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]))


TOKENS, OFFSETS = "tokens.npy", "offsets.npy"


class TokenCache:
    """The packed corpus tokens of one multi-vector encoder on one corpus: ``tokens.npy`` (in the passages' dtype)
    and ``offsets.npy`` in an ``mmr_cache`` entry keyed like ``embedding_cache``'s (model, image processor,
    settings, passage dtype, corpus fingerprint)."""

    def __init__(self, cache_dir, encoder_identity: dict, data_fingerprint: str, num_items: int):
        manifest = {"encoder": encoder_identity, "data": data_fingerprint, "num_items": num_items}
        # as the entry's JSON will hold it (tuples read back as lists), so that a stored manifest compares equal
        self.manifest = json.loads(json.dumps(manifest, default=str))
        self.key = cache_key({"tokens": encoder_identity}, data_fingerprint)
        self.folder = Path(cache_dir or default_dir()) / self.key

    def load(self):
        """The cached PackedTokens (on CPU), or None when absent, written for something else or damaged."""
        entry = mmr_cache.read_entry(self.folder, self.key)
        if (
            entry is None
            or not isinstance(entry[0], dict)
            or {k: entry[0].get(k) for k in self.manifest} != (self.manifest)
        ):
            return None
        try:
            tokens, offsets = np.load(self.folder / TOKENS), np.load(self.folder / OFFSETS)
            packed = PackedTokens(torch.from_numpy(tokens), torch.from_numpy(offsets))
        except (OSError, ValueError, TypeError):
            return None
        if len(packed) != self.manifest["num_items"] or not all_finite(packed.vectors):
            return None  # NaN vectors (an older mmrhub cached them) are never served
        return packed

    def save(self, packed: PackedTokens) -> bool:
        """Write the entry whole; False (and a warning) when the cache cannot be written."""
        try:
            with new_entry(self.folder, self.key, dict(self.manifest, dim=int(packed.vectors.shape[1]))) as work:
                np.save(work / TOKENS, packed.vectors.cpu().numpy())
                np.save(work / OFFSETS, packed.offsets.numpy())
            return True
        except OSError as err:
            why = mmr_cache.unusable(err, self.folder) or f"cannot write {self.folder}: {err}"
            logger.warning("not cached: %s", why)
            return False
