"""embed -> cache -> retrieve -> write -> score, on one process or many."""

import json
import re
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve import distributed
from mmrhub.retrieve.cache import EmbeddingCache
from mmrhub.retrieve.data import Items
from mmrhub.retrieve.data import fingerprint
from mmrhub.retrieve.data import load_both_sides
from mmrhub.retrieve.data import loader
from mmrhub.retrieve.encoders import CORPUS
from mmrhub.retrieve.encoders import QUERIES
from mmrhub.retrieve.encoders import build_encoder
from mmrhub.retrieve.options import DEFAULT_MODELS
from mmrhub.retrieve.runfile import rankings
from mmrhub.retrieve.runfile import read_pools
from mmrhub.retrieve.topk import exact_topk
from mmrhub.retrieve.topk import faiss_topk
from mmrhub.retrieve.topk import pool_topk
from mmrhub.scoring.run_writing import write_run
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import score_runs
from mmrhub.scoring.tables import table

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class Phases:
    """Wall time and item rate per phase, printed as one line each on the main process."""

    def __init__(self, context):
        self.context = context
        self.stats = {}

    def say(self, message: str):
        if self.context.is_main:
            print(message, flush=True)

    def done(self, name: str, items: int, started: float, note: str = "", unit: str = "item"):
        if self.context.device.type == "cuda":
            torch.cuda.synchronize(self.context.device)
        seconds = time.perf_counter() - started
        # Epoch end time: lets a GPU monitor's samples be matched to the phase (bench/gpu_check.sh).
        self.stats[name] = {"items": items, "seconds": round(seconds, 4), "end": round(time.time(), 3)}
        if not items:
            self.say(f"[{name}] {seconds:.2f} s{note}")
            return
        rate = items / seconds if seconds > 0 else float("inf")
        self.stats[name]["items_per_s"] = round(rate, 2)
        self.say(f"[{name}] {items:,} {unit}s in {seconds:.2f} s: {rate:,.1f} {unit}s/s{note}")


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return DTYPES[name]


def default_output(benchmark: str, model_id: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id.rstrip("/").split("/")[-1])
    return Path("runs") / f"{benchmark}_{slug}.json"


def embed(dataset, table, role, encoder, context, args, phases) -> torch.Tensor:
    """This rank's shard through the encoder, gathered: (len(dataset), dim) float32 on the device, in order."""
    items = Items(distributed.shard(dataset, context), table)
    batches = loader(items, encoder.collate(role), args.batch_size, args.num_workers, context.device.type == "cuda")
    started = time.perf_counter()
    vectors = []
    desc = f"embed {role}" + (f" (rank 0 of {context.world_size})" if context.distributed else "")
    with tqdm(total=len(items), desc=desc, unit="item", disable=not context.is_main) as bar:
        for batch in batches:
            vectors.append(encoder.encode(batch, role))
            bar.update(len(batch["ids"]))
    local = torch.cat(vectors) if vectors else torch.empty((0, 0), device=context.device)
    gathered = distributed.gather_rows(local, context)
    phases.done(f"embed {role}", len(dataset), started, f" ({context.world_size} process(es))")
    return gathered


def corpus_embeddings(corpus, table, encoder, context, args, phases) -> torch.Tensor:
    cache = None
    if not args.no_cache and context.is_main:
        cache = EmbeddingCache(args.cache_dir, encoder.identity, fingerprint(corpus, table), len(corpus))
    cached = cache.load() if cache is not None else None
    if distributed.broadcast(cached is not None, context):
        if not context.is_main:
            return None  # only rank 0 searches
        phases.say(f"[embed corpus] {len(cached):,} embeddings reused from {cache.folder}")
        phases.stats["embed corpus"] = {"items": 0, "cached": len(cached)}
        return torch.from_numpy(cached)
    vectors = embed(corpus, table, CORPUS, encoder, context, args, phases)
    if cache is not None:
        cache.save(vectors.cpu().numpy())
        phases.say(f"[embed corpus] cached in {cache.folder}")
    return vectors


def search(queries, corpus, args, pools, context, phases):
    started = time.perf_counter()
    queries, corpus = queries.to(context.device), corpus.to(context.device)
    if pools is not None:
        scores, indices = pool_topk(queries, corpus, pools.to(context.device))
        how = f"rerank {pools.shape[1]} candidates"
    elif args.search == "faiss":
        scores, indices = faiss_topk(queries, corpus, args.top_k)
        how = f"faiss IndexFlatIP top-{args.top_k}"
    else:
        scores, indices = exact_topk(queries, corpus, args.top_k)
        how = f"exact top-{args.top_k} on {context.device}"
    scores, indices = scores.cpu(), indices.cpu()
    phases.done("search", len(queries), started, f" ({how}, {len(corpus):,} corpus items)")
    return scores, indices


def run(args) -> int:
    return distributed.launched(args, _run)


def _run(args, context) -> int:
    phases = Phases(context)
    dtype = resolve_dtype(args.dtype, context.device)
    if context.device.type == "cpu":
        phases.say(f"CUDA is not available: running on CPU ({dtype}, {torch.get_num_threads()} threads)."
                   if not torch.cuda.is_available() else f"Running on CPU ({dtype}) as asked.")
    else:
        phases.say(f"Running on {torch.cuda.get_device_name(context.device)} ({dtype}), {context.world_size} process(es).")
    model_id = args.model or DEFAULT_MODELS[args.backend]

    benchmark = BENCHMARKS[args.benchmark]
    queries, query_table, corpus, corpus_table = load_both_sides(benchmark, args, context)
    query_ids = queries[query_table.id_column]
    corpus_ids = corpus[corpus_table.id_column]
    truth = benchmark.read_truth(args.data_dir or benchmark.sample_dir) if context.is_main else None
    pools = read_pools(args.candidates, truth, query_ids, corpus_ids) if args.candidates else None

    started = time.perf_counter()
    encoder = build_encoder(
        args.backend, model_id, revision=args.revision, device=context.device, dtype=dtype,
        max_length=args.max_length, text_weight=args.text_weight, query_prompt=args.query_prompt,
    )
    phases.done("load model", 0, started, f" ({args.backend}: {model_id})")

    corpus_vectors = corpus_embeddings(corpus, corpus_table, encoder, context, args, phases)
    query_vectors = embed(queries, query_table, QUERIES, encoder, context, args, phases)
    if not context.is_main:
        return 0

    scores, indices = search(query_vectors, corpus_vectors, args, pools, context, phases)
    ids, values = rankings(corpus_ids, scores, indices)
    output = write_run(args.output or default_output(args.benchmark, model_id), query_ids, ids, values)
    phases.say(f"Run written to {output} ({len(query_ids):,} queries).")
    if not args.no_eval:
        request = ScoringRequest(benchmark, args.data_dir, runs=(str(output),), rerank=args.candidates,
                                 measure_options={"k": benchmark.measures.DEFAULT_K})
        rows = score_runs(request, truth)
        print(table([(row.name, row.result) for row in rows]))
    if args.stats_json:
        stats = {"device": str(context.device), "world_size": context.world_size, "dtype": str(dtype),
                 "model": model_id, "backend": args.backend, "phases": phases.stats}
        Path(args.stats_json).write_text(json.dumps(stats, indent=1))
    return 0
