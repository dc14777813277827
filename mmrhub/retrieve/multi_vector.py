"""Multi-vector (late-interaction) encoders in the pipeline: PreFLMR.

Such an encoder's ``encode(batch, role)`` returns every token's vector and which tokens are kept: (n, tokens, dim)
and (n, tokens) bool. Each corpus batch is packed as it comes (``maxsim.pack``: kept tokens only, float16 on
CUDA), so the padded vectors of the whole corpus never exist at once; the packed corpus is gathered over the
processes, cached, and searched exactly (``maxsim.maxsim_topk``).
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
from mmrhub.retrieve.images import EXIF_APPLY
from mmrhub.retrieve.maxsim import PASSAGE_DTYPE_SOURCE
from mmrhub.retrieve.maxsim import PackedTokens
from mmrhub.retrieve.maxsim import concat
from mmrhub.retrieve.maxsim import maxsim_topk
from mmrhub.retrieve.maxsim import pack
from mmrhub.retrieve.maxsim import passage_dtype
from mmrhub.retrieve.provenance import model_identity
from mmrhub.writing import new_entry

logger = logging.getLogger(__name__)
BACKENDS = ("preflmr",)  # the encoders.ENCODERS whose encode gives token vectors and their kept mask
SEARCH = "exact MaxSim over every passage (maxsim.py); the authors search an approximate PLAID index"


class TokenEncoder:
    """A multi-vector model as the pipeline runs it: ``collate`` (in the DataLoader workers) and ``encode`` are the
    model's own; this adds what the pipeline and the cache need (identity, orientation, the passages' dtype)."""

    multi_vector = True

    def __init__(self, model, model_id: str, settings, revision, device, dtype):
        self.model = model
        self.settings = settings
        self.orientation = settings.exif_orientation or EXIF_APPLY
        self.row_instructions = settings.row_instructions
        self.passage_dtype = passage_dtype(device)
        processor = getattr(model, "image_processor_name", None) or settings.image_processor
        # The model's own account of itself (checkpoint, dtype, config), else what we can tell of it.
        own = getattr(model, "identity", None)
        self.identity = dict(own) if own else {"model": model_identity(model_id, revision), "dtype": str(dtype)}
        self.identity.update(
            backend=settings.backend,
            image_processor=model_identity(processor) if processor else None,
            passage_dtype=str(self.passage_dtype),
            exif_orientation=self.orientation,
            row_instructions=self.row_instructions,
        )

    def collate(self, role: str):
        """The model's collate for ``role`` (runs in the DataLoader workers)."""
        return self.model.collate(role)

    def reads_images(self, role: str) -> bool:
        """Whether ``role``'s images are read: the model says (``reads_images``), else queries' only (PreFLMR's
        passages are text: the issue and FE:226, ``passage_content`` alone)."""
        own = getattr(self.model, "reads_images", None)
        return own(role) if own is not None else role == "queries"

    def tokenizers(self) -> list:
        """The tokenisers its texts go through (for the unknown-token check)."""
        return list(getattr(self.model, "tokenizers", lambda: [])())

    def encode(self, batch, role: str):
        """(vectors (n, tokens, dim), kept (n, tokens) bool) of one collated batch, on the device."""
        return self.model.encode(batch, role)


def build_preflmr(model_id: str, settings, revision=None, device="cpu", dtype=torch.float32, text_weight=None):
    """The PreFLMR encoder of ``model_id`` (Hub id or folder) with the preset's image processor, as a TokenEncoder
    (``text_weight``: unused, the model fuses image and text itself)."""
    from mmrhub.retrieve.preflmr.encoder import build_preflmr_encoder

    refuse_unused(settings)

    model = build_preflmr_encoder(
        model_id, image_processor=settings.image_processor, device=device, dtype=dtype, revision=revision
    )
    return TokenEncoder(model, model_id, settings, revision, device, dtype)


# Settings the PreFLMR encoder takes from its checkpoint and the authors' code, never from the command line.
UNUSED = {
    "query_instruction": "--query-instruction (each query's own instruction is part of its text)",
    "document_instruction": "--document-instruction",
    "min_pixels": "--min-pixels (the CLIP image processor sizes images)",
    "max_pixels": "--max-pixels (the CLIP image processor sizes images)",
    "max_length": "--max-length (query_maxlen and doc_maxlen come with the checkpoint)",
}


def refuse_unused(settings) -> None:
    """An override PreFLMR would silently ignore is refused, naming the option."""
    for name, option in UNUSED.items():
        if getattr(settings, name) is not None:
            raise ValueError(f"{option}: not a PreFLMR setting; leave it out.")
    if not settings.row_instructions:
        raise ValueError(
            "--default-instruction: PreFLMR's queries begin with their own instruction (as its authors' code "
            "makes them); leave it out."
        )


class CorpusTokens:
    """What ``pipeline.embed`` keeps of corpus batches: each packed as it comes, then all gathered in order."""

    def __init__(self, encoder: TokenEncoder, context):
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


def search(queries: tuple, packed: PackedTokens, top_k: int, device) -> tuple:
    """(scores, indices) on CPU: the exact MaxSim top-k of every query."""
    vectors, kept = queries
    scores, indices = maxsim_topk(vectors, kept, packed.to(device), top_k)
    return scores.cpu(), indices.cpu()


def search_record(packed: PackedTokens) -> dict:
    """How the run searched: exact MaxSim, the passages' dtype (and why), how many kept tokens they hold."""
    return {
        "search": SEARCH,
        "passage_dtype": str(packed.vectors.dtype),
        "passage_dtype_source": PASSAGE_DTYPE_SOURCE,
        "kept_tokens": int(packed.offsets[-1]),
    }


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
        return packed if len(packed) == self.manifest["num_items"] else None

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
