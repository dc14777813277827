"""embed -> cache -> retrieve -> write -> score, on one process or many."""

import time
from dataclasses import replace
from functools import partial

import torch
from tqdm.auto import tqdm

from mmrhub.retrieve import distributed
from mmrhub.retrieve import multi_vector
from mmrhub.retrieve.data_loading import Items
from mmrhub.retrieve.data_loading import LoadedSide
from mmrhub.retrieve.data_loading import load_both_sides
from mmrhub.retrieve.data_loading import loader
from mmrhub.retrieve.data_loading import read_truth
from mmrhub.retrieve.distributed import resolve_dtype
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.encoders import CORPUS
from mmrhub.retrieve.encoders import QUERIES
from mmrhub.retrieve.encoders import build_encoder
from mmrhub.retrieve.maxsim import PackedTokens
from mmrhub.retrieve.model_loading import check_reachable
from mmrhub.retrieve.multi_vector import CorpusTokens
from mmrhub.retrieve.multi_vector import QueryTokens
from mmrhub.retrieve.multi_vector import TokenCache
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.progress import Phases
from mmrhub.retrieve.progress import score_and_record
from mmrhub.retrieve.provenance import candidates_record
from mmrhub.retrieve.provenance import data_record
from mmrhub.retrieve.provenance import environment_record
from mmrhub.retrieve.provenance import options_record
from mmrhub.retrieve.provenance import write_meta
from mmrhub.retrieve.run_files import rankings
from mmrhub.retrieve.run_files import read_pools
from mmrhub.retrieve.subsets import chosen_queries
from mmrhub.retrieve.subsets import is_subset
from mmrhub.retrieve.subsets import pooled_rows
from mmrhub.retrieve.subsets import renumbered
from mmrhub.retrieve.subsets import rows_of
from mmrhub.retrieve.token_budget import unknown_tokens_warning
from mmrhub.retrieve.topk import exact_topk
from mmrhub.retrieve.topk import faiss_topk
from mmrhub.retrieve.topk import pool_topk
from mmrhub.scoring.runs.writing import write_run


class Rows:
    """What ``embed`` keeps of a single-vector encoder's batches: (n, dim) rows, gathered in order."""

    def __init__(self, context):
        self.context = context

    def each(self, output):
        """One batch's vectors, as they are."""
        return output

    def join(self, parts: list) -> torch.Tensor:
        """Every rank's rows, in order."""
        local = torch.cat(parts) if parts else torch.empty((0, 0), device=self.context.device)
        return distributed.gather_rows(local, self.context)


def embed(side: LoadedSide, role, encoder, context, options: RetrieveOptions, phases, kept=None):
    """This rank's shard through the encoder, gathered in order: (len(side.dataset), dim) float32 on the device,
    or what ``kept`` (``each`` batch's output, ``join``ed) makes of it (multi_vector's). Inputs are prepared by
    the DataLoader workers (``encoder.collate``); this process moves them and runs the model."""
    kept = kept or Rows(context)
    if context.is_main:
        check_texts(side, role, encoder, options.model, phases)
    instructions = role == QUERIES and getattr(encoder, "row_instructions", False)
    images = getattr(encoder, "reads_images", lambda role: True)(role)
    items = Items(distributed.shard(side.dataset, context), side.table, encoder.orientation, instructions, images)
    if instructions and items.instruction_column:
        phases.say(f"[embed {role}] each query's instruction: its own '{items.instruction_column}' (the preset's)")
    if not images:
        phases.say(f"[embed {role}] text only: no image read (the model embeds their text alone)")
    batches = loader(
        items, encoder.collate(role), options.batch_size, options.runtime.num_workers, context.device.type == "cuda"
    )
    started = time.perf_counter()
    vectors = []
    desc = f"embed {role}" + (f" (rank 0 of {context.world_size})" if context.distributed else "")
    with tqdm(total=len(items), desc=desc, unit="item", disable=not context.is_main) as bar:
        for batch in batches:
            vectors.append(kept.each(encoder.encode(batch, role)))
            bar.update(len(batch["ids"]))
    gathered = kept.join(vectors)
    phases.done(f"embed {role}", len(side.dataset), started, f" ({context.world_size} process(es))")
    return gathered


def check_texts(side: LoadedSide, role: str, encoder, model_id: str, phases) -> None:
    """Warn when the encoder's tokenizer turns more than a few percent of the side's text tokens into unknowns."""
    texts = side.dataset.select_columns([side.table.text_column])[:2000][side.table.text_column]
    for tokenizer in encoder.tokenizers():
        warning = unknown_tokens_warning(tokenizer, texts, f"the {role}' texts", model_id)
        if warning:
            phases.warn(warning)


def corpus_embeddings(corpus: LoadedSide, encoder, context, options: RetrieveOptions, phases, rows=None):
    """The corpus vectors on rank 0 (None on the others), read from the cache, or embedded and then cached; a
    multi-vector encoder's as PackedTokens. ``rows``: only these corpus rows are ranked (a candidates run's pools;
    never with a multi-vector encoder): the whole corpus's cached vectors serve them when cached, else only these
    rows are embedded (and cached as an entry of their own)."""
    multi = getattr(encoder, "multi_vector", False)
    sides = [(corpus, None)] if rows is None else [(corpus, rows), (rows_of(corpus, rows), None)]
    cache = None
    for side, take in sides:
        cache = corpus_cache(side, encoder, context, options)
        cached = cache.load() if cache is not None else None
        if distributed.broadcast(cached is not None, context):
            if not context.is_main:
                return None  # only rank 0 searches
            phases.say(f"[embed corpus] {len(cached):,} embeddings reused from {cache.folder}")
            phases.stats["embed corpus"] = {"items": 0, "cached": len(cached)}
            if multi:
                return cached
            vectors = torch.from_numpy(cached)
            return vectors if take is None else vectors[torch.tensor(take, dtype=torch.int64)]
    side = sides[-1][0]
    if rows is not None:
        phases.say(f"[embed corpus] the {len(side.ids):,} items the candidates' pools name, of {len(corpus.ids):,}")
    vectors = embed(side, CORPUS, encoder, context, options, phases, CorpusTokens(encoder, context) if multi else None)
    if cache is not None:
        if cache.save(vectors if multi else vectors.cpu().numpy()):
            phases.say(f"[embed corpus] cached in {cache.folder}")
    return vectors


def corpus_cache(corpus: LoadedSide, encoder, context, options: RetrieveOptions):
    """The embedding cache of these corpus items on rank 0 (None elsewhere, or with --no-cache)."""
    runtime = options.runtime
    if not (runtime.use_cache and context.is_main):
        return None
    kind = TokenCache if getattr(encoder, "multi_vector", False) else EmbeddingCache
    return kind(runtime.cache_dir, encoder.identity, corpus.fingerprint, len(corpus.dataset))


def search(queries, corpus, options: RetrieveOptions, pools, context, phases):
    """(scores, indices) on CPU: each query's pool ranked, or the exact top-k of the whole corpus (a multi-vector
    encoder's: exact MaxSim)."""
    started = time.perf_counter()
    if isinstance(corpus, PackedTokens):
        scores, indices = multi_vector.search(queries, corpus, options.top_k, context.device)
        how = f"exact MaxSim top-{options.top_k} on {context.device}, passages in {corpus.vectors.dtype}"
        phases.done("search", len(scores), started, f" ({how}, {len(corpus):,} corpus items)")
        return scores, indices
    queries, corpus = queries.to(context.device), corpus.to(context.device)
    if pools is not None:
        scores, indices = pool_topk(queries, corpus, pools.to(context.device))
        how = f"rerank {pools.shape[1]} candidates"
    elif options.search == "faiss":
        scores, indices = faiss_topk(queries, corpus, options.top_k)
        how = f"faiss IndexFlatIP top-{options.top_k}"
    else:
        scores, indices = exact_topk(queries, corpus, options.top_k)
        how = f"exact top-{options.top_k} on {context.device}"
    scores, indices = scores.cpu(), indices.cpu()
    phases.done("search", len(queries), started, f" ({how}, {len(corpus):,} corpus items)")
    return scores, indices


def run(options: RetrieveOptions) -> int:
    """Embed, retrieve, write and (unless told not to) score, in the process group a launcher set up."""
    return distributed.launched(options.runtime, partial(_run, options))


def _run(options: RetrieveOptions, context) -> int:
    phases = Phases(context)
    dtype = resolve_dtype(options.runtime.dtype, context.device)
    if context.device.type == "cpu":
        phases.say(
            f"CUDA is not available: running on CPU ({dtype}, {torch.get_num_threads()} threads)."
            if not torch.cuda.is_available()
            else f"Running on CPU ({dtype}) as asked."
        )
    else:
        name = torch.cuda.get_device_name(context.device)
        phases.say(f"Running on {name} ({dtype}), {context.world_size} process(es).")

    data = options.data
    run_path = options.output.run_path(data, options.model, options.candidates) if context.is_main else None
    queries, corpus = load_both_sides(data, context)
    all_queries = len(queries.ids)
    queries = chosen_queries(queries, options.queries, options.query_ids)
    truth = read_truth(data) if context.is_main else None
    pools = read_pools(options.candidates, truth, queries.ids, corpus.ids) if options.candidates else None
    pooled = pooled_rows(pools) if pools is not None else None

    started = time.perf_counter()
    settings = options.settings.resolve(options.model, "embedding")
    backend = settings.backend or options.backend
    multi = backend in multi_vector.BACKENDS
    if multi:
        refuse_with_tokens(options, pools)
    check_reachable(options.model, "--model", options.revision)
    if settings.image_processor:
        check_reachable(settings.image_processor, "--image-processor")
    encoder = build_encoder(
        backend,
        options.model,
        settings,
        revision=options.revision,
        device=context.device,
        dtype=dtype,
        text_weight=options.text_weight,
    )
    phases.done("load model", 0, started, f" ({backend}: {options.model})")

    corpus_vectors = corpus_embeddings(corpus, encoder, context, options, phases, pooled)
    query_vectors = embed(queries, QUERIES, encoder, context, options, phases, QueryTokens(context) if multi else None)
    if not context.is_main:
        return 0

    if pooled is not None:  # the vectors are the pooled rows': the pools and ids follow
        pools, ranked = renumbered(pools, pooled, len(corpus.ids)), [corpus.ids[row] for row in pooled]
    else:
        ranked = corpus.ids
    scores, indices = search(query_vectors, corpus_vectors, options, pools, context, phases)
    ids, values = rankings(ranked, scores, indices)
    output = write_run(run_path, queries.ids, ids, values)
    write_meta(
        output,
        "retrieve",
        options.model,
        encoder.identity,
        settings,
        backend=backend,
        **({"search": multi_vector.search_record(corpus_vectors)} if multi else {}),
        options=options_record(options),
        data=data_record(data, queries, corpus),
        **candidates_record(options.candidates),
        **environment_record(context.device, dtype),
    )
    phases.say(f"Run written to {output} ({len(queries.ids):,} queries).")
    if is_subset(queries, all_queries) and options.output.score:
        phases.warn(
            f"Not scored: the run holds {len(queries.ids):,} of the {all_queries:,} queries (--queries, --query-ids), "
            "and the benchmark's means are over all of them."
        )
        options = replace(options, output=replace(options.output, score=False))
    score_and_record(options, truth, output, settings, context, dtype, phases, backend=backend)
    return 0


def refuse_with_tokens(options: RetrieveOptions, pools) -> None:
    """What a multi-vector (MaxSim) run cannot do yet, in one line each."""
    if pools is not None:
        raise ValueError(
            "--candidates: PreFLMR ranks the whole corpus (exact MaxSim); leave --candidates out, or rerank its run "
            "with `mmrhub rerank`."
        )
    if options.search != "torch":
        raise ValueError(f"--search {options.search}: PreFLMR searches with exact MaxSim (maxsim.py); leave --search.")
