"""``mmrhub baseline {mipr,m2kr}``: the seed's pipeline in one command. Embed and retrieve the top-k, rerank it,
then one table: the embedding row, the reranked row and the Candidate-pool Oracle of the embedding's pools.

torch is imported only when the command runs.
"""

import os
import re
from pathlib import Path

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve.options import BACKENDS
from mmrhub.retrieve.options import DEFAULT_MODELS
from mmrhub.retrieve.rerank_options import DEFAULT_RERANKER
from mmrhub.retrieve.rerank_options import add_model_arguments


def register(subparsers):
    parser = subparsers.add_parser(
        "baseline", help="retrieve the top-k with an embedding model, rerank it, score both and the oracle"
    )
    parser.add_argument("benchmark", choices=list(BENCHMARKS))
    parser.add_argument("--data-dir", help="the benchmark's data folder or URL (default: the bundled sample)")
    parser.add_argument("--split", help="split to load (default: the benchmark's own, test / train)")
    parser.add_argument("--images-dir", help="M2KR: the folder of the image archives, if not DATA_DIR/images or DATA_DIR")
    parser.add_argument("--output-dir", default="runs", help="where both runs are written (default: runs)")
    parser.add_argument("--top-k", type=int, default=50, help="candidates retrieved per query (default 50, as the seed)")
    embedding = parser.add_argument_group("embedding model")
    embedding.add_argument("--embedding-model", default=DEFAULT_MODELS["sentence-transformers"],
                           help=f"Hub id or local folder (default: {DEFAULT_MODELS['sentence-transformers']})")
    embedding.add_argument("--embedding-backend", choices=BACKENDS, default="sentence-transformers")
    embedding.add_argument("--embedding-batch-size", type=int, default=32)
    reranker = parser.add_argument_group("reranker (the --dtype, --device and --num-workers options serve both models)")
    reranker.add_argument("--reranker-model", default=DEFAULT_RERANKER,
                          help=f"sentence-transformers CrossEncoder (default: {DEFAULT_RERANKER})")
    add_model_arguments(reranker)
    parser.set_defaults(func=run)


def model_name(model_id: str) -> str:
    """The row's name: the last part of a Hub id or folder, as in the seed's table (Qwen3-VL-Embedding-8B)."""
    return os.path.basename(os.path.normpath(model_id))


def slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name(model_id))


def run(args) -> int:
    from mmrhub.retrieve import pipeline
    from mmrhub.retrieve import rerank
    from mmrhub.retrieve.options import build_parser as retrieve_parser
    from mmrhub.retrieve.rerank_options import build_parser as rerank_parser
    from mmrhub.scoring.request import ScoringRequest
    from mmrhub.scoring.score import score_runs
    from mmrhub.scoring.tables import table

    out = Path(args.output_dir)
    embedding_run = out / f"{args.benchmark}_{slug(args.embedding_model)}_top{args.top_k}.json"
    reranked_run = out / f"{args.benchmark}_{slug(args.reranker_model)}_top{args.top_k}.json"
    shared = [args.benchmark, "--dtype", args.dtype, "--num-workers", str(args.num_workers)]
    shared += ["--data-dir", args.data_dir] if args.data_dir else []
    shared += ["--split", args.split] if args.split else []
    shared += ["--images-dir", args.images_dir] if args.images_dir else []
    shared += ["--device", args.device] if args.device else []
    shared += ["--no-cache"] if args.no_cache else []
    cache = (lambda name: ["--cache-dir", str(Path(args.cache_dir) / name)]) if args.cache_dir else (lambda name: [])

    pipeline.run(retrieve_parser().parse_args([
        *shared, *cache("embeddings"), "--backend", args.embedding_backend, "--model", args.embedding_model,
        "--batch-size", str(args.embedding_batch_size), "--top-k", str(args.top_k), "--output", str(embedding_run),
        "--no-eval",
    ]))
    rerank_options = [
        *shared, *cache("rerank"), "--candidates", str(embedding_run), "--model", args.reranker_model,
        "--batch-size", str(args.batch_size), "--chunk-queries", str(args.chunk_queries), "--output",
        str(reranked_run), "--no-eval",
    ]
    for option in ("revision", "max_length", "prompt", "top_n"):
        if getattr(args, option) is not None:
            rerank_options += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    rerank.run(rerank_parser().parse_args(rerank_options))
    if int(os.environ.get("RANK", "0")) != 0:
        return 0  # the other processes of torchrun / accelerate only embedded and scored their shards

    benchmark = BENCHMARKS[args.benchmark]
    truth = benchmark.read_truth(args.data_dir or benchmark.sample_dir)
    request = ScoringRequest(
        benchmark, args.data_dir, runs=(str(embedding_run), str(reranked_run)),
        names=(model_name(args.embedding_model), model_name(args.reranker_model)),
        oracle=str(embedding_run), rerank=str(embedding_run), measure_options={"k": benchmark.measures.DEFAULT_K},
    )
    rows = score_runs(request, truth)
    print(table([(row.name, row.result) for row in rows]))
    print(f"Reranking and the Oracle operate on {model_name(args.embedding_model)}'s top-{args.top_k} candidates; "
          f"runs in {out}.")
    return 0
