"""Single-vector search in the pipeline: one vector an item (``encoders.py``), cached (``embedding_cache.py``), and
ranked exactly, by faiss, or within each query's candidate pool (``topk.py``).

``late_interaction/search.py`` is the other kind. The pipeline chooses one of the two once, by the backend
(``pipeline.search_for``), and asks it for all that differs between them: the encoder, what is kept of each batch,
the cache, the search, what the record says of it, and what it refuses.
"""

import torch

from mmrhub.retrieve import distributed
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.encoders import build_encoder
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.topk import exact_topk
from mmrhub.retrieve.topk import faiss_topk
from mmrhub.retrieve.topk import pool_topk


class Rows:
    """What ``pipeline.embed`` keeps of a single-vector encoder's batches: (n, dim) rows, gathered in order."""

    def __init__(self, context):
        self.context = context

    def each(self, output):
        """One batch's vectors, as they are."""
        return output

    def join(self, parts: list) -> torch.Tensor:
        """Every rank's rows, in order."""
        local = torch.cat(parts) if parts else torch.empty((0, 0), device=self.context.device)
        return distributed.gather_rows(local, self.context)


class SingleVectorSearch:
    """One L2-normalised vector an item, compared by inner product."""

    def __init__(self, options: RetrieveOptions, context):
        self.options, self.context = options, context

    def refuse(self, pools) -> None:
        """A candidates run's pools and every ``--search`` are taken; ``--search faiss`` needs faiss installed,
        which is said before the model loads."""
        from importlib.util import find_spec

        if self.options.search == "faiss" and pools is None and find_spec("faiss") is None:
            raise ValueError(
                "--search faiss: faiss is not installed (pip install faiss-cpu, or mmrhub's faiss extra); leave "
                "--search out for the exact torch search, which ranks alike."
            )

    def build_encoder(self, backend: str, model_id: str, settings, **options):
        """The ``backend``'s encoder (``encoders.ENCODERS``)."""
        return build_encoder(backend, model_id, settings, **options)

    def keeper(self, role: str, encoder) -> Rows:
        """What ``pipeline.embed`` keeps of ``role``'s batches: the rows as they come."""
        return Rows(self.context)

    def cache(self, corpus, encoder) -> EmbeddingCache:
        """The embedding cache of the ``corpus`` side (a LoadedSide) under this encoder."""
        runtime = self.options.runtime
        return EmbeddingCache(runtime.cache_dir, encoder.identity, corpus.fingerprint, len(corpus.dataset))

    def to_cache(self, vectors: torch.Tensor):
        """The gathered corpus vectors as the cache stores them (a float32 array)."""
        return vectors.cpu().numpy()

    def from_cache(self, cached, take) -> torch.Tensor:
        """The cached array as the search takes it; ``take``: only these rows (a candidates run's pools)."""
        vectors = torch.from_numpy(cached)
        return vectors if take is None else vectors[torch.tensor(take, dtype=torch.int64)]

    def search(self, queries: torch.Tensor, corpus: torch.Tensor, pools) -> tuple:
        """(scores, indices on CPU, how it searched): each query's pool ranked, or the top-k of the whole corpus."""
        device, top_k = self.context.device, self.options.top_k
        queries, corpus = queries.to(device), corpus.to(device)
        if pools is not None:
            scores, indices = pool_topk(queries, corpus, pools.to(device))
            how = f"rerank {pools.shape[1]} candidates"
        elif self.options.search == "faiss":
            scores, indices = faiss_topk(queries, corpus, top_k)
            how = f"faiss IndexFlatIP top-{top_k}"
        else:
            scores, indices = exact_topk(queries, corpus, top_k)
            how = f"exact top-{top_k} on {device}"
        return scores.cpu(), indices.cpu(), how

    def record(self, corpus) -> dict:
        """What the run's record says of the search besides its options: nothing more."""
        return {}
