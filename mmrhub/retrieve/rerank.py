"""candidates -> pairs -> cached or scored chunks -> reranked run -> pool check -> score, on one process or many.

Several processes (``torchrun`` / ``accelerate launch``) take contiguous slices of the chunks (queries); rank 0
gathers the scores in chunk order, so the run is the one a single process writes.
"""

import json
import time
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve import distributed
from mmrhub.retrieve.data import Items
from mmrhub.retrieve.data import fingerprint
from mmrhub.retrieve.data import load_both_sides
from mmrhub.retrieve.pipeline import Phases
from mmrhub.retrieve.pipeline import default_output
from mmrhub.retrieve.pipeline import resolve_dtype
from mmrhub.retrieve.rerank_cache import ScoreCache
from mmrhub.retrieve.rerank_pairs import batches
from mmrhub.retrieve.rerank_pairs import chunks
from mmrhub.retrieve.rerank_pairs import reranked
from mmrhub.retrieve.rerank_pairs import shard
from mmrhub.retrieve.reranker import PairItems
from mmrhub.retrieve.reranker import Reranker
from mmrhub.retrieve.runfile import read_pools
from mmrhub.scoring.run_validation import check_pool
from mmrhub.scoring.run_reading import read_run
from mmrhub.scoring.run_writing import write_run
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import score_runs
from mmrhub.scoring.tables import table


def run(args) -> int:
    for option in ("batch_size", "chunk_queries", "top_n"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ValueError(f"--{option.replace('_', '-')} {value}: must be at least 1.")
    return distributed.launched(args, _run)


def _run(args, context) -> int:
    phases = Phases(context)
    dtype = resolve_dtype(args.dtype, context.device)
    where = torch.cuda.get_device_name(context.device) if context.device.type == "cuda" else "CPU"
    phases.say(f"Reranking on {where} ({dtype}), {context.world_size} process(es).")

    benchmark = BENCHMARKS[args.benchmark]
    queries, query_table, corpus, corpus_table = load_both_sides(benchmark, args, context)
    # Plain lists: indexing a datasets Column costs a formatting call per item, and pairs number 100,000s.
    query_ids, corpus_ids = list(queries[query_table.id_column]), list(corpus[corpus_table.id_column])

    truth = pools = data = None
    if context.is_main:
        truth = benchmark.read_truth(args.data_dir or benchmark.sample_dir)
        pools = [[c for c in row if c >= 0] for row in read_pools(args.candidates, truth, query_ids, corpus_ids).tolist()]
        data = None if args.no_cache else fingerprint(queries, query_table) + fingerprint(corpus, corpus_table)
    pools, data = distributed.broadcast((pools, data), context)

    started = time.perf_counter()
    reranker = Reranker(args.model, revision=args.revision, device=context.device, dtype=dtype,
                        max_length=args.max_length, prompt=args.prompt)
    phases.done("load model", 0, started, f" (CrossEncoder: {args.model})")

    cache = None if args.no_cache else ScoreCache(args.cache_dir, reranker.identity, data)
    all_chunks = chunks(pools, args.chunk_queries, args.top_n)
    mine = shard(all_chunks, context.rank, context.world_size)
    scores = score_chunks(mine, queries, query_table, corpus, corpus_table, query_ids, corpus_ids, reranker, cache,
                          context, args, phases)
    local = torch.from_numpy(np.concatenate(scores)) if scores else torch.empty(0)
    gathered = distributed.gather_rows(local, context)
    if not context.is_main:
        return 0

    rankings, values, offset = [], [], 0
    for chunk in all_chunks:
        by_query = {}
        for (q, _), score in zip(chunk.pairs, gathered[offset : offset + len(chunk.pairs)].tolist()):
            by_query.setdefault(q, []).append(score)
        offset += len(chunk.pairs)
        last = min(chunk.first_query + args.chunk_queries, len(pools))
        for q in range(chunk.first_query, last):
            items, item_scores = reranked(pools[q], by_query.get(q, []))
            rankings.append([corpus_ids[c] for c in items])
            values.append(item_scores)
    output = write_run(args.output or default_output(args.benchmark, args.model), query_ids, rankings, values)
    check_pool(read_run(output), read_run(args.candidates))
    phases.say(f"Run written to {output} ({len(query_ids):,} queries; pools of {args.candidates} kept).")
    if not args.no_eval:
        request = ScoringRequest(benchmark, args.data_dir, runs=(str(output),), rerank=args.candidates,
                                 measure_options={"k": benchmark.measures.DEFAULT_K})
        rows = score_runs(request, truth)
        print(table([(row.name, row.result) for row in rows]))
    if args.stats_json:
        stats = {"device": str(context.device), "world_size": context.world_size, "dtype": str(dtype),
                 "model": args.model, "phases": phases.stats}
        Path(args.stats_json).write_text(json.dumps(stats, indent=1))
    return 0


def score_chunks(mine, queries, query_table, corpus, corpus_table, query_ids, corpus_ids, reranker, cache, context,
                 args, phases) -> list:
    """This rank's chunks' scores (float32 arrays, chunk order): read from the cache, or scored and then cached
    chunk by chunk."""
    keys = [chunk.key(query_ids, corpus_ids) for chunk in mine]
    scores = [cache.load(key, len(chunk.pairs)) if cache else None for key, chunk in zip(keys, mine)]
    todo = [i for i, value in enumerate(scores) if value is None]
    cached = sum(len(chunk.pairs) for chunk, value in zip(mine, scores) if value is not None)
    if cached:
        phases.say(f"[rerank] {cached:,} pair scores reused from {cache.folder}")

    query_texts, corpus_texts = list(queries[query_table.text_column]), list(corpus[corpus_table.text_column])
    pairs, batch_list, owner = [], [], []  # owner: (chunk, its first position in ``pairs``) of each batch
    for i in todo:
        lengths = [len(query_texts[q] or "") + len(corpus_texts[c] or "") for q, c in mine[i].pairs]
        for batch in batches(lengths, args.batch_size):
            batch_list.append([len(pairs) + position for position in batch])
            owner.append((i, len(pairs)))
        pairs.extend(mine[i].pairs)

    started = time.perf_counter()
    items = PairItems(Items(queries, query_table), Items(corpus, corpus_table), pairs)
    loader = torch.utils.data.DataLoader(
        items, batch_sampler=batch_list, num_workers=args.num_workers, collate_fn=reranker.collate(),
        prefetch_factor=4 if args.num_workers else None,
    )
    pending = {i: np.full(len(mine[i].pairs), np.nan, dtype=np.float32) for i in todo}
    left = {i: len(mine[i].pairs) for i in todo}
    desc = "rerank" + (f" (rank 0 of {context.world_size})" if context.distributed else "")
    with tqdm(total=len(pairs), desc=desc, unit="pair", disable=not context.is_main) as bar:
        for positions, (chunk, first), batch in zip(batch_list, owner, loader):
            pending[chunk][[p - first for p in positions]] = reranker.score(batch).numpy()
            left[chunk] -= len(positions)
            if not left[chunk]:
                scores[chunk] = pending.pop(chunk)
                if cache:
                    cache.save(keys[chunk], scores[chunk])
            bar.update(len(positions))
    phases.done("rerank", len(pairs), started, f" ({context.world_size} process(es), {cached:,} cached)", unit="pair")
    return scores
