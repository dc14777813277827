"""Late-interaction search in the pipeline: the token vectors of every kept token (``tokens.py``), cached
(``tokens.TokenCache``), and searched by exact MaxSim (``maxsim.py``). The pipeline chooses this or
``single_vector.SingleVectorSearch`` once, by the backend, and asks it for all that differs between them.
"""

from mmrhub.retrieve.data_loading import CORPUS
from mmrhub.retrieve.late_interaction.maxsim import PASSAGE_DTYPE_SOURCE
from mmrhub.retrieve.late_interaction.maxsim import PackedTokens
from mmrhub.retrieve.late_interaction.maxsim import maxsim_topk
from mmrhub.retrieve.late_interaction.preflmr import encoder as preflmr
from mmrhub.retrieve.late_interaction.tokens import CorpusTokens
from mmrhub.retrieve.late_interaction.tokens import QueryTokens
from mmrhub.retrieve.late_interaction.tokens import TokenCache
from mmrhub.retrieve.model_loading import build_model
from mmrhub.retrieve.options import RetrieveOptions

# The backends whose encoder gives token vectors and their kept mask (a preset names one: PreFLMR's).
TOKEN_BACKENDS = ("preflmr",)
SEARCH = "exact MaxSim over every passage (maxsim.py); the authors search an approximate PLAID index"


class LateInteractionSearch:
    """One vector per kept token, scored by MaxSim over every passage."""

    def __init__(self, options: RetrieveOptions, context):
        self.options, self.context = options, context

    def refuse(self, pools) -> None:
        """What a MaxSim run cannot do, in one line each, before the model loads."""
        if pools is not None:
            raise ValueError(
                "--candidates: PreFLMR ranks the whole corpus (exact MaxSim); leave --candidates out, or rerank its "
                "run with `mmrhub rerank`."
            )
        if self.options.search != "torch":
            raise ValueError(
                f"--search {self.options.search}: PreFLMR searches with exact MaxSim (maxsim.py); leave --search."
            )

    def build_encoder(self, backend: str, model_id: str, settings, **options):
        """PreFLMR's encoder (looked up when called, so that a test can stand a model in for it)."""
        return build_model(preflmr.PreFLMREncoder, model_id, settings, **options)

    def keeper(self, role: str, encoder):
        """What ``pipeline.embed`` keeps of ``role``'s batches: passages packed as they come, queries padded."""
        return CorpusTokens(encoder, self.context) if role == CORPUS else QueryTokens(self.context)

    def cache(self, corpus, encoder) -> TokenCache:
        """The token cache of the ``corpus`` side (a LoadedSide) under this encoder."""
        runtime = self.options.runtime
        return TokenCache(runtime.cache_dir, encoder.identity, corpus.fingerprint, len(corpus.dataset))

    def to_cache(self, packed: PackedTokens) -> PackedTokens:
        """The packed corpus, as the cache stores it."""
        return packed

    def from_cache(self, cached: PackedTokens, take) -> PackedTokens:
        """The cached packed corpus (``take`` is always None: candidates are refused)."""
        return cached

    def search(self, queries: tuple, packed: PackedTokens, pools) -> tuple:
        """(scores, indices on CPU, how it searched): the exact MaxSim top-k of every query."""
        vectors, kept = queries
        device, top_k = self.context.device, self.options.top_k
        scores, indices = maxsim_topk(vectors, kept, packed.to(device), top_k)
        how = f"exact MaxSim top-{top_k} on {device}, passages in {packed.vectors.dtype}"
        return scores.cpu(), indices.cpu(), how

    def record(self, packed: PackedTokens) -> dict:
        """How the run searched: exact MaxSim, the passages' dtype (and why), how many kept tokens they hold."""
        return {
            "search": {
                "search": SEARCH,
                "passage_dtype": str(packed.vectors.dtype),
                "passage_dtype_source": PASSAGE_DTYPE_SOURCE,
                "kept_tokens": int(packed.offsets[-1]),
            }
        }
