"""candidates -> pairs -> cached or scored chunks -> reranked run -> pool check -> score, on one process or many.

Several processes (``torchrun`` / ``accelerate launch``) take contiguous slices of the chunks (queries); rank 0
gathers the scores in chunk order, so the run is the one a single process writes.
"""

import time
from functools import partial

import numpy as np
import torch
from tqdm.auto import tqdm

from mmrhub.records.meta import write_meta
from mmrhub.records.provenance import candidates_record
from mmrhub.records.provenance import data_record
from mmrhub.records.provenance import environment_record
from mmrhub.records.provenance import options_record
from mmrhub.retrieve import distributed
from mmrhub.retrieve.data_loading import INSTRUCTION_COLUMN
from mmrhub.retrieve.data_loading import Items
from mmrhub.retrieve.data_loading import LoadedSide
from mmrhub.retrieve.data_loading import has_instructions
from mmrhub.retrieve.data_loading import keep_freed_memory
from mmrhub.retrieve.data_loading import load_both_sides
from mmrhub.retrieve.data_loading import read_truth
from mmrhub.retrieve.data_loading import worker_context
from mmrhub.retrieve.data_loading import worker_errors
from mmrhub.retrieve.distributed import resolve_dtype
from mmrhub.retrieve.finite import check as check_finite
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.progress import Phases
from mmrhub.retrieve.progress import score_and_record
from mmrhub.retrieve.rerank.model import PairBatches
from mmrhub.retrieve.rerank.model import Reranker
from mmrhub.retrieve.rerank.pairs import chunks
from mmrhub.retrieve.rerank.pairs import reranked
from mmrhub.retrieve.rerank.pairs import shard
from mmrhub.retrieve.rerank.score_cache import ScoreCache
from mmrhub.retrieve.rerank.shared_inputs import SHARED
from mmrhub.retrieve.rerank.shared_inputs import TEMPLATE
from mmrhub.retrieve.rerank.shared_inputs import TOKEN_BUDGET
from mmrhub.retrieve.run_files import check_candidates
from mmrhub.retrieve.run_files import read_pools
from mmrhub.retrieve.token_budget import unknown_tokens_warning
from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.validation import check_pool
from mmrhub.scoring.runs.writing import write_run


def run(options: RerankOptions) -> int:
    """Rerank, write, check the pools and (unless told not to) score, in the process group a launcher set up."""
    return distributed.launched(options.runtime, partial(_run, options))


def _run(options: RerankOptions, context) -> int:
    phases = Phases(context)
    runtime = options.runtime
    dtype = resolve_dtype(runtime.dtype, context.device)
    where = torch.cuda.get_device_name(context.device) if context.device.type == "cuda" else "CPU"
    phases.say(f"Reranking on {where} ({dtype}), {context.world_size} process(es).")

    data = options.data
    run_path = options.output.run_path(data, options.model, options.candidates) if context.is_main else None
    options.runtime.check_cache_dir()
    check_candidates(options.candidates)
    queries, corpus = load_both_sides(data, context)

    truth = pools = fingerprints = None
    if context.is_main:
        truth = read_truth(data)
        candidates = read_pools(options.candidates, truth, queries.ids, corpus.ids).tolist()
        pools = [[c for c in row if c >= 0] for row in candidates]
        if runtime.use_cache:
            fingerprints = queries.fingerprint + corpus.fingerprint
    pools, fingerprints = distributed.broadcast((pools, fingerprints), context)

    started = time.perf_counter()
    settings = options.settings.resolve(options.model, "reranker")
    phases.say(
        f"[load model] preset {settings.name}, chosen by {options.settings.chosen_by(options.model, 'reranker')}"
    )
    reranker = Reranker(
        options.model,
        settings,
        revision=options.revision,
        device=context.device,
        dtype=dtype,
        shared_prefix=options.shared_prefix,
    )
    phases.done("load model", 0, started, f" (CrossEncoder: {options.model})")
    phases.say(f"[rerank] {path_line(reranker)}")
    instruction = instruction_used(reranker, queries)
    phases.say(f"[rerank] <Instruct>: {instruction}")

    cache = ScoreCache(runtime.cache_dir, reranker.identity, fingerprints) if runtime.use_cache else None
    all_chunks = chunks(pools, options.chunk_queries, options.top_n)
    mine = shard(all_chunks, context.rank, context.world_size)
    scores, paths = score_chunks(mine, queries, corpus, reranker, cache, context, options, phases)
    local = torch.from_numpy(np.concatenate(scores)) if scores else torch.empty(0)
    gathered = distributed.gather_rows(local.to(context.device), context).cpu()  # NCCL gathers device tensors
    paths = pairs_record(reranker, paths, context)
    if not context.is_main:
        return 0

    rankings, values, offset = [], [], 0
    for chunk in all_chunks:
        by_query = {}
        for (q, _), score in zip(chunk.pairs, gathered[offset : offset + len(chunk.pairs)].tolist()):
            by_query.setdefault(q, []).append(score)
        offset += len(chunk.pairs)
        last = min(chunk.first_query + options.chunk_queries, len(pools))
        for q in range(chunk.first_query, last):
            items, item_scores = reranked(pools[q], by_query.get(q, []))
            rankings.append([corpus.ids[c] for c in items])
            values.append(item_scores)
    output = write_run(run_path, queries.ids, rankings, values)
    check_pool(read_run(output), read_run(options.candidates))
    write_meta(
        output,
        "rerank",
        options.model,
        reranker.identity,
        settings,
        instruction=instruction,
        options=options_record(options),
        pairs=paths,
        data=data_record(data, queries, corpus),
        **candidates_record(options.candidates),
        **environment_record(context.device, dtype),
    )
    phases.say(f"Run written to {output} ({len(queries.ids):,} queries; pools of {options.candidates} kept).")
    score_and_record(options, truth, output, settings, context, dtype, phases)
    return 0


def instruction_used(reranker, queries: LoadedSide) -> str:
    """What the pairs' <Instruct>: line held, in words: each query's own instruction, or the run's one."""
    if reranker.row_instructions and has_instructions(queries.dataset):
        return (
            f"each query's own '{INSTRUCTION_COLUMN}' (the preset's, as QwenLM's eval_reranker.py passes it; "
            f"rows without one: {reranker.resolved_prompt!r})"
        )
    return repr(reranker.resolved_prompt)


def score_chunks(
    mine, queries: LoadedSide, corpus: LoadedSide, reranker, cache, context, options: RerankOptions, phases
) -> list:
    """This rank's chunks' scores (float32 arrays, chunk order): read from the cache, or scored and then cached
    chunk by chunk."""
    keys = [chunk.key(queries.ids, corpus.ids) for chunk in mine]
    scores = [cache.load(key, len(chunk.pairs)) if cache else None for key, chunk in zip(keys, mine)]
    todo = [i for i, value in enumerate(scores) if value is None]
    cached = sum(len(chunk.pairs) for chunk, value in zip(mine, scores) if value is not None)
    if cached:
        phases.say(f"[rerank] {cached:,} pair scores reused from {cache.folder}")

    query_texts = list(queries.dataset[queries.table.text_column])
    corpus_texts = list(corpus.dataset[corpus.table.text_column])
    if context.is_main:
        for tokenizer in reranker.tokenizers():
            for texts, what in ((query_texts, "the queries' texts"), (corpus_texts, "the corpus' texts")):
                warning = unknown_tokens_warning(tokenizer, texts, what, options.model)
                if warning:
                    phases.warn(warning)
    work = []  # (chunk, its pairs, their texts' lengths: the workers batch longest inputs first)
    for i in todo:
        lengths = [len(query_texts[q] or "") + len(corpus_texts[c] or "") for q, c in mine[i].pairs]
        work.append((i, mine[i].pairs, lengths))
    total = sum(len(mine[i].pairs) for i in todo)

    started = time.perf_counter()
    orientation = reranker.orientation
    items = PairBatches(
        Items(queries.dataset, queries.table, orientation, instructions=reranker.row_instructions),
        Items(corpus.dataset, corpus.table, orientation),
        work,
        reranker,
        options.batch_size,
    )
    num_workers = min(options.runtime.num_workers, len(work))  # a worker makes whole chunks
    loader = torch.utils.data.DataLoader(
        items,
        batch_size=None,
        num_workers=num_workers,
        collate_fn=as_made,
        pin_memory=context.device.type == "cuda",
        prefetch_factor=2 if num_workers else None,
        multiprocessing_context=worker_context(num_workers),
        worker_init_fn=keep_freed_memory if num_workers else None,
    )
    pending = {i: np.full(len(mine[i].pairs), np.nan, dtype=np.float32) for i in todo}
    left = {i: len(mine[i].pairs) for i in todo}
    paths = {CACHED: cached}  # pairs by the path that scored them (SHARED, or why they ran whole)
    desc = "rerank" + (f" (rank 0 of {context.world_size})" if context.distributed else "")
    with tqdm(total=total, desc=desc, unit="pair", disable=not context.is_main) as bar:
        for chunk, positions, batch, path in worker_errors(loader):  # a worker's error: the one line it would be
            batch_scores = reranker.score(batch).numpy()
            check_finite(
                batch_scores, options.model, partial(pair_named, mine[chunk].pairs, positions, queries, corpus)
            )
            pending[chunk][positions] = batch_scores
            paths[path] = paths.get(path, 0) + len(positions)
            left[chunk] -= len(positions)
            if not left[chunk]:
                scores[chunk] = pending.pop(chunk)
                if cache:
                    cache.save(keys[chunk], scores[chunk])
            bar.update(len(positions))
    shared = paths.get(SHARED, 0)
    note = f" ({context.world_size} process(es), {cached:,} cached, {shared:,} against shared prefixes)"
    phases.done("rerank", total, started, note, unit="pair")
    return scores, paths


CACHED = "cached"


def path_line(reranker) -> str:
    """Which path the pairs take, in words."""
    if reranker.shared is not None:
        return (
            "shared prefix: each query's image and prompt run once for all its candidates (pairs the token budget "
            "would cut run whole)"
        )
    return f"whole pairs: {reranker.whole_because}"


def pairs_record(reranker, paths: dict, context) -> dict:
    """What the run record says of the path: the one asked for and taken, and how many pairs each path scored
    (summed over the processes), cached ones apart."""
    names = sorted({SHARED, CACHED, TOKEN_BUDGET, TEMPLATE, reranker.whole_because or SHARED})
    counts = torch.tensor([[paths.get(name, 0) for name in names]], dtype=torch.long, device=context.device)
    totals = dict(zip(names, distributed.gather_rows(counts, context).sum(0).tolist()))
    return {
        "path": SHARED if reranker.shared is not None else "whole pairs",
        "whole_pairs_because": reranker.whole_because,
        "scored": {name: count for name, count in totals.items() if name != CACHED and count},
        "cached": totals[CACHED],
    }


def pair_named(pairs: list, positions, queries: LoadedSide, corpus: LoadedSide, row: int) -> str:
    """A batch's ``row``-th pair in words, for messages."""
    q, c = pairs[positions[row]]
    return f"the pair of query {queries.ids[q]!r} and candidate {corpus.ids[c]!r}"


def as_made(batch):
    """The DataLoader's collate for batches the workers made whole (``PairBatches``): the batch as it is."""
    return batch
