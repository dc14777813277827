"""``mmrhub baseline {mipr,m2kr}``: the MIPR paper's pipeline in one command. Embed and retrieve the top-k, rerank it,
then one table: the embedding row, the reranked row and the Candidate-pool Oracle of the embedding's pools.

torch is imported only when the command runs.
"""

import os
from dataclasses import replace
from pathlib import Path

from mmrhub.commands.arguments import add_data_arguments
from mmrhub.commands.arguments import add_reranker_arguments
from mmrhub.commands.arguments import data_options
from mmrhub.commands.arguments import run_options
from mmrhub.retrieve.naming import model_name
from mmrhub.retrieve.naming import slug
from mmrhub.retrieve.options import BACKENDS
from mmrhub.retrieve.options import DEFAULT_MODELS
from mmrhub.retrieve.options import DEFAULT_RERANKER
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions


def register(subparsers):
    """Add ``baseline``."""
    parser = subparsers.add_parser(
        "baseline", help="retrieve the top-k with an embedding model, rerank it, score both and the oracle"
    )
    add_data_arguments(parser)
    parser.add_argument("--output-dir", default="runs", help="where both runs are written (default: runs)")
    parser.add_argument(
        "--top-k", type=int, default=50, help="candidates retrieved per query (default 50, as in the MIPR paper)"
    )
    embedding = parser.add_argument_group("embedding model")
    embedding.add_argument(
        "--embedding-model",
        default=DEFAULT_MODELS["sentence-transformers"],
        help=f"Hub id or local folder (default: {DEFAULT_MODELS['sentence-transformers']})",
    )
    embedding.add_argument("--embedding-backend", choices=BACKENDS, default="sentence-transformers")
    embedding.add_argument("--embedding-batch-size", type=int, default=32)
    reranker = parser.add_argument_group("reranker (the --dtype, --device and --num-workers options serve both models)")
    reranker.add_argument(
        "--reranker-model",
        default=DEFAULT_RERANKER,
        help=f"sentence-transformers CrossEncoder (default: {DEFAULT_RERANKER})",
    )
    add_reranker_arguments(reranker)
    parser.set_defaults(func=run)


def pipeline_options(args) -> tuple:
    """(RetrieveOptions, RerankOptions) of the two steps: the reranker's candidates are the embedding's run, and
    each model caches in its own folder under --cache-dir."""
    data = data_options(args)
    out = Path(args.output_dir)
    embedding_run = out / f"{data.benchmark.name}_{slug(args.embedding_model)}_top{args.top_k}.json"
    reranked_run = out / f"{data.benchmark.name}_{slug(args.reranker_model)}_top{args.top_k}.json"
    runtime = run_options(args)
    cache_dir = (lambda name: str(Path(args.cache_dir) / name)) if args.cache_dir else (lambda name: None)
    retrieve = RetrieveOptions(
        data=data,
        model=args.embedding_model,
        backend=args.embedding_backend,
        batch_size=args.embedding_batch_size,
        top_k=args.top_k,
        runtime=replace(runtime, cache_dir=cache_dir("embeddings")),
        output=OutputOptions(path=str(embedding_run), score=False),
    )
    rerank = RerankOptions(
        data=data,
        candidates=str(embedding_run),
        model=args.reranker_model,
        revision=args.revision,
        max_length=args.max_length,
        prompt=args.prompt,
        batch_size=args.batch_size,
        top_n=args.top_n,
        chunk_queries=args.chunk_queries,
        runtime=replace(runtime, cache_dir=cache_dir("rerank")),
        output=OutputOptions(path=str(reranked_run), score=False),
    )
    return retrieve, rerank


def run(args) -> int:
    """Retrieve, rerank, then print the table of both runs and the oracle of the embedding's pools."""
    retrieve_options, rerank_options = pipeline_options(args)
    from mmrhub.retrieve import pipeline
    from mmrhub.retrieve import rerank
    from mmrhub.scoring.request import ScoringRequest
    from mmrhub.scoring.score import score_runs
    from mmrhub.scoring.tables import table

    pipeline.run(retrieve_options)
    rerank.run(rerank_options)
    if int(os.environ.get("RANK", "0")) != 0:
        return 0  # the other processes of torchrun / accelerate only embedded and scored their shards

    data = retrieve_options.data
    embedding_run, reranked_run = retrieve_options.output.path, rerank_options.output.path
    truth = data.benchmark.read_truth(data.folder)
    request = ScoringRequest(
        data.benchmark,
        data.data_dir,
        runs=(embedding_run, reranked_run),
        names=(model_name(retrieve_options.model), model_name(rerank_options.model)),
        oracle=embedding_run,
        rerank=embedding_run,
        measure_options={"k": data.benchmark.measures.DEFAULT_K},
    )
    rows = score_runs(request, truth)
    print(table([(row.name, row.result) for row in rows]))
    print(
        f"Reranking and the Oracle operate on {model_name(retrieve_options.model)}'s top-{args.top_k} candidates; "
        f"runs in {Path(args.output_dir)}."
    )
    return 0
