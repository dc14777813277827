"""embed -> cache -> retrieve -> write -> score, on one process or many."""

import time
from dataclasses import replace
from functools import partial

import torch
from tqdm.auto import tqdm

from mmrhub.records.meta import write_meta
from mmrhub.records.provenance import candidates_record
from mmrhub.records.provenance import data_record
from mmrhub.records.provenance import environment_record
from mmrhub.records.provenance import options_record
from mmrhub.retrieve import distributed
from mmrhub.retrieve.data_loading import CORPUS
from mmrhub.retrieve.data_loading import QUERIES
from mmrhub.retrieve.data_loading import Items
from mmrhub.retrieve.data_loading import LoadedSide
from mmrhub.retrieve.data_loading import load_both_sides
from mmrhub.retrieve.data_loading import loader
from mmrhub.retrieve.data_loading import read_truth
from mmrhub.retrieve.distributed import resolve_dtype
from mmrhub.retrieve.finite import check as check_finite
from mmrhub.retrieve.late_interaction.search import TOKEN_BACKENDS
from mmrhub.retrieve.late_interaction.search import LateInteractionSearch
from mmrhub.retrieve.model_loading import check_reachable
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.progress import Phases
from mmrhub.retrieve.progress import score_and_record
from mmrhub.retrieve.run_files import check_candidates
from mmrhub.retrieve.run_files import rankings
from mmrhub.retrieve.run_files import read_pools
from mmrhub.retrieve.single_vector import SingleVectorSearch
from mmrhub.retrieve.subsets import chosen_queries
from mmrhub.retrieve.subsets import is_subset
from mmrhub.retrieve.subsets import pooled_rows
from mmrhub.retrieve.subsets import renumbered
from mmrhub.retrieve.subsets import rows_of
from mmrhub.retrieve.token_budget import unknown_tokens_warning
from mmrhub.scoring.runs.writing import write_run

ITEM = {QUERIES: "the query", CORPUS: "the corpus item"}  # an item of each side, in messages


def search_for(backend: str, options: RetrieveOptions, context):
    """The kind of search ``backend``'s encoder makes: late interaction (token vectors, MaxSim) or single vectors.
    Chosen once a run; it holds all that differs between the two."""
    kind = LateInteractionSearch if backend in TOKEN_BACKENDS else SingleVectorSearch
    return kind(options, context)


def embed(side: LoadedSide, role: str, encoder, context, options: RetrieveOptions, phases, kept):
    """This rank's shard through the encoder, each batch's output kept by ``kept`` (``each``) and every rank's
    gathered in order (``join``): the search kind's keeper. Inputs are prepared by the DataLoader workers
    (``encoder.collate``); this process moves them and runs the model."""
    if context.is_main:
        check_texts(side, role, encoder, options.model, phases)
    instructions = role == QUERIES and encoder.row_instructions
    images = encoder.reads_images(role)
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
            output = encoder.encode(batch, role)  # token encoders: (vectors, kept mask)
            values, ids = output[0] if isinstance(output, tuple) else output, batch["ids"]
            check_finite(values, options.model, lambda row: f"{ITEM[role]} {ids[row]!r}")
            vectors.append(kept.each(output))
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


def corpus_embeddings(corpus: LoadedSide, encoder, context, options: RetrieveOptions, phases, kind, rows=None):
    """(the corpus vectors on rank 0, None on the others; the cache to write them to once the queries are embedded
    too, or None): read from the cache, or embedded, as the search ``kind`` keeps them. ``rows``: only these corpus
    rows are ranked (a candidates run's pools): the whole corpus's cached vectors serve them when cached, else only
    these rows are embedded (and cached as an entry of their own)."""
    sides = [(corpus, None)] if rows is None else [(corpus, rows), (rows_of(corpus, rows), None)]
    cache = None
    for side, take in sides:
        cache = kind.cache(side, encoder) if options.runtime.use_cache and context.is_main else None
        cached = cache.load() if cache is not None else None
        if distributed.broadcast(cached is not None, context):
            if not context.is_main:
                return None, None  # only rank 0 searches
            phases.say(f"[embed corpus] {len(cached):,} embeddings reused from {cache.folder}")
            phases.stats["embed corpus"] = {"items": 0, "cached": len(cached)}
            return kind.from_cache(cached, take), None
    side = sides[-1][0]
    if rows is not None:
        phases.say(f"[embed corpus] the {len(side.ids):,} items the candidates' pools name, of {len(corpus.ids):,}")
    return embed(side, CORPUS, encoder, context, options, phases, kind.keeper(CORPUS, encoder)), cache


def search(queries, corpus, pools, kind, phases):
    """(scores, indices) on CPU, as the search ``kind`` ranks: each query's pool, or the whole corpus."""
    started = time.perf_counter()
    scores, indices, how = kind.search(queries, corpus, pools)
    phases.done("search", len(scores), started, f" ({how}, {len(corpus):,} corpus items)")
    return scores, indices


def run(options: RetrieveOptions) -> int:
    """Embed, retrieve, write and (unless told not to) score, in the process group a launcher set up."""
    return distributed.launched(options.runtime, partial(_run, options))


def _run(options: RetrieveOptions, context) -> int:
    phases = Phases(context)
    settings = options.settings.resolve(options.model, "embedding")
    dtype = resolve_dtype(options.runtime.dtype, context.device, settings.dtype)
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
    options.runtime.check_cache_dir()
    check_candidates(options.candidates)
    queries, corpus = load_both_sides(data, context)
    all_queries = len(queries.ids)
    queries = chosen_queries(queries, options.queries, options.query_ids)
    truth = read_truth(data) if context.is_main else None
    pools = read_pools(options.candidates, truth, queries.ids, corpus.ids) if options.candidates else None
    pooled = pooled_rows(pools) if pools is not None else None

    started = time.perf_counter()
    phases.say(
        f"[load model] preset {settings.name}, chosen by {options.settings.chosen_by(options.model, 'embedding')}"
    )
    backend = settings.backend or options.backend
    kind = search_for(backend, options, context)
    kind.refuse(pools)
    check_reachable(options.model, "--model", options.revision)
    if settings.image_processor:
        check_reachable(settings.image_processor, "--image-processor")
    encoder = kind.build_encoder(
        backend,
        options.model,
        settings,
        revision=options.revision,
        device=context.device,
        dtype=dtype,
        text_weight=options.text_weight,
    )
    phases.done("load model", 0, started, f" ({backend}: {options.model})")

    corpus_vectors, cache = corpus_embeddings(corpus, encoder, context, options, phases, kind, pooled)
    query_vectors = embed(queries, QUERIES, encoder, context, options, phases, kind.keeper(QUERIES, encoder))
    if not context.is_main:
        return 0
    # cached once every vector of the run is known finite (a model whose query side gives NaN leaves no entry)
    if cache is not None and cache.save(kind.to_cache(corpus_vectors)):
        phases.say(f"[embed corpus] cached in {cache.folder}")

    if pooled is not None:  # the vectors are the pooled rows': the pools and ids follow
        pools, ranked = renumbered(pools, pooled, len(corpus.ids)), [corpus.ids[row] for row in pooled]
    else:
        ranked = corpus.ids
    scores, indices = search(query_vectors, corpus_vectors, pools, kind, phases)
    ids, values = rankings(ranked, scores, indices)
    output = write_run(run_path, queries.ids, ids, values)
    write_meta(
        output,
        "retrieve",
        options.model,
        encoder.identity,
        settings,
        backend=backend,
        **kind.record(corpus_vectors),
        options=options_record(options),
        data=data_record(data, queries, corpus, (encoder.reads_images(QUERIES), encoder.reads_images(CORPUS))),
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
