"""embed -> cache -> retrieve -> write -> score, on one process or many."""

import time
from functools import partial

import torch
from tqdm.auto import tqdm

from mmrhub.retrieve import distributed
from mmrhub.retrieve.data_loading import Items
from mmrhub.retrieve.data_loading import LoadedSide
from mmrhub.retrieve.data_loading import load_both_sides
from mmrhub.retrieve.data_loading import loader
from mmrhub.retrieve.distributed import resolve_dtype
from mmrhub.retrieve.embedding_cache import EmbeddingCache
from mmrhub.retrieve.encoders import CORPUS
from mmrhub.retrieve.encoders import QUERIES
from mmrhub.retrieve.encoders import build_encoder
from mmrhub.retrieve.model_loading import check_reachable
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
from mmrhub.retrieve.token_budget import unknown_tokens_warning
from mmrhub.retrieve.topk import exact_topk
from mmrhub.retrieve.topk import faiss_topk
from mmrhub.retrieve.topk import pool_topk
from mmrhub.scoring.runs.writing import write_run


def embed(side: LoadedSide, role, encoder, context, options: RetrieveOptions, phases) -> torch.Tensor:
    """This rank's shard through the encoder, gathered: (len(side.dataset), dim) float32 on the device, in order.
    Inputs are prepared by the DataLoader workers (``encoder.collate``); this process moves them and runs the
    model."""
    if context.is_main:
        check_texts(side, role, encoder, options.model, phases)
    instructions = role == QUERIES and getattr(encoder, "row_instructions", False)
    items = Items(distributed.shard(side.dataset, context), side.table, encoder.orientation, instructions)
    if instructions and items.instruction_column:
        phases.say(f"[embed {role}] each query's system turn: its own '{items.instruction_column}' (the preset's)")
    batches = loader(
        items, encoder.collate(role), options.batch_size, options.runtime.num_workers, context.device.type == "cuda"
    )
    started = time.perf_counter()
    vectors = []
    desc = f"embed {role}" + (f" (rank 0 of {context.world_size})" if context.distributed else "")
    with tqdm(total=len(items), desc=desc, unit="item", disable=not context.is_main) as bar:
        for batch in batches:
            vectors.append(encoder.encode(batch, role))
            bar.update(len(batch["ids"]))
    local = torch.cat(vectors) if vectors else torch.empty((0, 0), device=context.device)
    gathered = distributed.gather_rows(local, context)
    phases.done(f"embed {role}", len(side.dataset), started, f" ({context.world_size} process(es))")
    return gathered


def check_texts(side: LoadedSide, role: str, encoder, model_id: str, phases) -> None:
    """Warn when the encoder's tokenizer turns more than a few percent of the side's text tokens into unknowns."""
    texts = side.dataset.select_columns([side.table.text_column])[:2000][side.table.text_column]
    for tokenizer in encoder.tokenizers():
        warning = unknown_tokens_warning(tokenizer, texts, f"the {role}' texts", model_id)
        if warning:
            phases.warn(warning)


def corpus_embeddings(corpus: LoadedSide, encoder, context, options: RetrieveOptions, phases) -> torch.Tensor:
    """The corpus vectors on rank 0 (None on the others): read from the cache, or embedded and then cached."""
    runtime = options.runtime
    cache = None
    if runtime.use_cache and context.is_main:
        cache = EmbeddingCache(runtime.cache_dir, encoder.identity, corpus.fingerprint, len(corpus.dataset))
    cached = cache.load() if cache is not None else None
    if distributed.broadcast(cached is not None, context):
        if not context.is_main:
            return None  # only rank 0 searches
        phases.say(f"[embed corpus] {len(cached):,} embeddings reused from {cache.folder}")
        phases.stats["embed corpus"] = {"items": 0, "cached": len(cached)}
        return torch.from_numpy(cached)
    vectors = embed(corpus, CORPUS, encoder, context, options, phases)
    if cache is not None:
        if cache.save(vectors.cpu().numpy()):
            phases.say(f"[embed corpus] cached in {cache.folder}")
    return vectors


def search(queries, corpus, options: RetrieveOptions, pools, context, phases):
    """(scores, indices) on CPU: each query's pool ranked, or the exact top-k of the whole corpus."""
    started = time.perf_counter()
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
    benchmark = data.benchmark
    run_path = options.output.run_path(data, options.model, options.candidates) if context.is_main else None
    queries, corpus = load_both_sides(data, context)
    truth = benchmark.read_truth(data.folder) if context.is_main else None
    pools = read_pools(options.candidates, truth, queries.ids, corpus.ids) if options.candidates else None

    started = time.perf_counter()
    settings = options.settings.resolve(options.model, "embedding")
    check_reachable(options.model, "--model", options.revision)
    encoder = build_encoder(
        options.backend,
        options.model,
        settings,
        revision=options.revision,
        device=context.device,
        dtype=dtype,
        text_weight=options.text_weight,
    )
    phases.done("load model", 0, started, f" ({options.backend}: {options.model})")

    corpus_vectors = corpus_embeddings(corpus, encoder, context, options, phases)
    query_vectors = embed(queries, QUERIES, encoder, context, options, phases)
    if not context.is_main:
        return 0

    scores, indices = search(query_vectors, corpus_vectors, options, pools, context, phases)
    ids, values = rankings(corpus.ids, scores, indices)
    output = write_run(run_path, queries.ids, ids, values)
    write_meta(
        output,
        "retrieve",
        options.model,
        encoder.identity,
        settings,
        backend=options.backend,
        options=options_record(options),
        data=data_record(data, queries, corpus),
        **candidates_record(options.candidates),
        **environment_record(context.device, dtype),
    )
    phases.say(f"Run written to {output} ({len(queries.ids):,} queries).")
    score_and_record(options, truth, output, settings, context, dtype, phases, backend=options.backend)
    return 0
