"""``mmrhub baseline {mipr,m2kr}``: the MIPR paper's pipeline in one command. Embed and retrieve the top-k, rerank it,
then one table: the embedding row, the reranked row and the Candidate-pool Oracle of the embedding's pools.
``--paper``: the MIPR paper's models (Qwen3-VL-Embedding-8B, Qwen3-VL-Reranker-8B) with their presets on the
top-50, our rows printed beside the published ones; on M2KR the challenge card's PreFLMR ViT-G row (the
benchmark's ``published_baseline``), printed beside the card's with what differs from the authors' run.

torch is imported only when the command runs.
"""

from dataclasses import replace
from pathlib import Path

from mmrhub.commands.arguments import add_batch_size_argument
from mmrhub.commands.arguments import add_data_arguments
from mmrhub.commands.arguments import add_device_arguments
from mmrhub.commands.arguments import add_dtype_argument
from mmrhub.commands.arguments import add_pool_arguments
from mmrhub.commands.arguments import add_preset_arguments
from mmrhub.commands.arguments import data_options
from mmrhub.commands.arguments import model_settings
from mmrhub.commands.arguments import run_options
from mmrhub.commands.converters import positive_int
from mmrhub.retrieve.options import BACKEND_CHOICES
from mmrhub.retrieve.options import DEFAULT_MODELS
from mmrhub.retrieve.options import DEFAULT_RERANKER
from mmrhub.retrieve.options import OutputOptions
from mmrhub.retrieve.options import RerankOptions
from mmrhub.retrieve.options import RetrieveOptions
from mmrhub.retrieve.presets import QWEN3_VL_EMBEDDING
from mmrhub.retrieve.presets import QWEN3_VL_RERANKER
from mmrhub.retrieve.run_files import model_name
from mmrhub.retrieve.run_files import slug

PAPER_EMBEDDING = "Qwen/Qwen3-VL-Embedding-8B"
PAPER_RERANKER = "Qwen/Qwen3-VL-Reranker-8B"
PAPER_TOP_K = 50


def register(subparsers):
    """Add ``baseline``."""
    parser = subparsers.add_parser(
        "baseline", help="retrieve the top-k with an embedding model, rerank it, score both and the oracle"
    )
    add_data_arguments(parser)
    parser.add_argument("--output-dir", default="runs", help="where both runs are written (default: runs)")
    parser.add_argument(
        "--top-k",
        type=positive_int,
        default=PAPER_TOP_K,
        help="candidates retrieved per query (default 50, as in the MIPR paper)",
    )
    parser.add_argument(
        "--paper",
        action="store_true",
        help=f"MIPR: the paper's rows, {PAPER_EMBEDDING} and {PAPER_RERANKER} with their presets on the "
        f"top-{PAPER_TOP_K}, printed beside the published rows with the differences; M2KR: the challenge card's "
        "PreFLMR ViT-G row (LinWeizheDragon/PreFLMR_ViT-G, preset preflmr, exact MaxSim), printed beside the card's "
        "with what differs, in float32 as its authors load it unless --dtype says otherwise, reranked only when "
        "--reranker-model is given",
    )
    # Each model's options are named after it (--embedding-*, --reranker-*); those of both stand alone.
    embedding = parser.add_argument_group("embedding model")
    embedding.add_argument(
        "--embedding-model",
        help=f"Hub id or local folder (default: {DEFAULT_MODELS['sentence-transformers']}; "
        f"with --paper {PAPER_EMBEDDING})",
    )
    embedding.add_argument("--embedding-revision", help="Hub revision (branch, tag or commit) of the embedding model")
    embedding.add_argument(
        "--embedding-backend",
        choices=BACKEND_CHOICES,
        default="sentence-transformers",
        help="sentence-transformers (Qwen3-VL-Embedding) or transformers (CLIP-style; default sentence-transformers)",
    )
    embedding.add_argument(
        "--embedding-batch-size", type=positive_int, default=32, help="inputs per forward pass (default 32)"
    )
    add_preset_arguments(embedding, "embedding", prefix="embedding-")
    reranker = parser.add_argument_group("reranker")
    reranker.add_argument(
        "--reranker-model",
        help=f"sentence-transformers CrossEncoder (default: {DEFAULT_RERANKER}; with --paper {PAPER_RERANKER} on "
        "MIPR, none on M2KR unless given)",
    )
    reranker.add_argument("--reranker-revision", help="Hub revision (branch, tag or commit) of the reranker")
    add_batch_size_argument(reranker, "reranker-")
    add_preset_arguments(reranker, "reranker", prefix="reranker-")
    add_pool_arguments(reranker)
    both = parser.add_argument_group("both models")
    add_dtype_argument(both)
    add_device_arguments(both)
    both.add_argument(
        "--cache-dir",
        help="the caches of both: corpus embeddings in DIR/embeddings, pair scores in DIR/rerank (default: "
        "$HF_HOME/mmrhub/embeddings and $HF_HOME/mmrhub/rerank)",
    )
    both.add_argument("--no-cache", action="store_true", help="neither read nor write cached embeddings or scores")
    parser.set_defaults(func=run)


def chosen_models(args) -> tuple:
    """(embedding model, its settings, reranker model, its settings): --paper's 8B models and their presets
    unless told otherwise (M2KR: the card's baseline model, reranked only when --reranker-model is given, else
    reranker None), else the 2B defaults."""
    embedding_settings = model_settings(args, "embedding_")
    reranker_settings = model_settings(args, "reranker_")
    if not args.paper:
        embedding = args.embedding_model or DEFAULT_MODELS["sentence-transformers"]
        return embedding, embedding_settings, args.reranker_model or DEFAULT_RERANKER, reranker_settings
    baseline = args.benchmark.published_baseline
    if not args.benchmark.published_table and baseline is None:
        raise ValueError(f"--paper: {args.benchmark.name} has no published table or baseline row.")
    if args.top_k != PAPER_TOP_K or args.embedding_backend != "sentence-transformers":
        raise ValueError(f"--paper runs the paper's setting: leave --top-k ({PAPER_TOP_K}) and --embedding-backend.")
    reranker_settings = replace(reranker_settings, preset=reranker_settings.preset or QWEN3_VL_RERANKER.name)
    if baseline is not None:
        return (
            args.embedding_model or baseline.model,
            replace(embedding_settings, preset=embedding_settings.preset or baseline.preset),
            args.reranker_model,
            reranker_settings if args.reranker_model else None,
        )
    return (
        args.embedding_model or PAPER_EMBEDDING,
        replace(embedding_settings, preset=embedding_settings.preset or QWEN3_VL_EMBEDDING.name),
        args.reranker_model or PAPER_RERANKER,
        reranker_settings,
    )


def run_names(benchmark_name: str, embedding: str, reranker, top_k: int) -> tuple:
    """The two runs' file names: the models' slugs, told apart by role when they are the same (two folders
    both called ``hub``), so the reranked run never overwrites the embedding run; no reranker: the one."""
    if reranker is None:
        return (f"{benchmark_name}_{slug(embedding)}_top{top_k}.json", None)
    first, second = told_apart(slug(embedding), slug(reranker), "-embedding", "-reranked")
    return f"{benchmark_name}_{first}_top{top_k}.json", f"{benchmark_name}_{second}_top{top_k}.json"


def row_names(embedding: str, reranker: str) -> tuple:
    """The two rows' names in the table: the models' names, told apart by role when they are the same."""
    return told_apart(model_name(embedding), model_name(reranker), " (embedding)", " (reranked)")


def told_apart(first: str, second: str, first_role: str, second_role: str) -> tuple:
    """The two names, each with its role appended when they are the same."""
    return (first + first_role, second + second_role) if first == second else (first, second)


def pipeline_options(args) -> tuple:
    """(RetrieveOptions, RerankOptions or None) of the two steps: the reranker's candidates are the embedding's
    run, and each model caches in its own folder under --cache-dir."""
    data = data_options(args)
    out = Path(args.output_dir)
    embedding_model, embedding_settings, reranker_model, reranker_settings = chosen_models(args)
    names = run_names(data.benchmark.name, embedding_model, reranker_model, args.top_k)
    embedding_run, reranked_run = out / names[0], names[1] and out / names[1]
    runtime = run_options(args)
    embedding_runtime = runtime
    if args.paper and data.benchmark.published_baseline is not None and args.dtype == "auto":
        # the baseline's authors load it in float32 (PreFLMR: example_use_preflmr.py:245-249, no dtype given)
        embedding_runtime = replace(runtime, dtype="float32")
    cache_dir = (lambda name: str(Path(args.cache_dir) / name)) if args.cache_dir else (lambda name: None)
    retrieve = RetrieveOptions(
        data=data,
        model=embedding_model,
        backend=args.embedding_backend,
        revision=args.embedding_revision,
        settings=embedding_settings,
        batch_size=args.embedding_batch_size,
        top_k=args.top_k,
        runtime=replace(embedding_runtime, cache_dir=cache_dir("embeddings")),
        output=OutputOptions(path=str(embedding_run), score=False, named_after_model=True),
    )
    if reranker_model is None:
        return retrieve, None
    rerank = RerankOptions(
        data=data,
        candidates=str(embedding_run),
        model=reranker_model,
        revision=args.reranker_revision,
        settings=reranker_settings,
        batch_size=args.reranker_batch_size,
        top_n=args.top_n,
        chunk_queries=args.chunk_queries,
        shared_prefix=not args.no_shared_prefix,
        runtime=replace(runtime, cache_dir=cache_dir("rerank")),
        output=OutputOptions(path=str(reranked_run), score=False, named_after_model=True),
    )
    return retrieve, rerank


def run(args) -> int:
    """Retrieve, rerank, then print the table of both runs and the oracle of the embedding's pools (--paper: beside
    the published rows, or the published baseline row with what differs)."""
    retrieve_options, rerank_options = pipeline_options(args)
    from mmrhub.retrieve import pipeline as retrieval
    from mmrhub.retrieve.data_loading import read_truth
    from mmrhub.retrieve.distributed import Context
    from mmrhub.retrieve.rerank import pipeline as reranking
    from mmrhub.scoring.output.captions import model_caption
    from mmrhub.scoring.output.captions import pools_caption
    from mmrhub.scoring.output.captions import table_captions
    from mmrhub.scoring.output.tables import beside_published
    from mmrhub.scoring.output.tables import scores_table
    from mmrhub.scoring.request import ScoringRequest
    from mmrhub.scoring.score import score_runs

    retrieval.run(retrieve_options)
    if rerank_options is not None:
        reranking.run(rerank_options)
    if not Context.from_launcher().is_main:
        return 0  # the other processes of torchrun / accelerate only embedded and scored their shards

    data = retrieve_options.data
    embedding_run = retrieve_options.output.path
    reranked = rerank_options is not None
    names = (
        row_names(retrieve_options.model, rerank_options.model) if reranked else (model_name(retrieve_options.model),)
    )
    truth = read_truth(data)
    if truth is None:
        print(f"Not scored: the judgment tables are read from {data.folder}, and scoring reads a local folder.")
        return 0
    request = ScoringRequest(
        data.benchmark,
        data.data_dir,
        runs=(embedding_run, rerank_options.output.path) if reranked else (embedding_run,),
        names=names,
        oracle=embedding_run,
        rerank=embedding_run if reranked else None,
        measure_options={"k": data.benchmark.measures.DEFAULT_K},
    )
    rows = score_runs(request, truth)
    captions = [
        model_caption(retrieve_options.model, retrieve_options.settings.resolve(retrieve_options.model, "embedding"))
    ]
    if reranked:
        captions.append(
            model_caption(rerank_options.model, rerank_options.settings.resolve(rerank_options.model, "reranker"))
        )
    print("; ".join(captions))
    print(scores_table(rows) + table_captions(request, truth, rows))
    print(pools_caption(request.names[0], args.top_k, Path(args.output_dir)))
    if args.paper and data.benchmark.published_baseline is not None:
        print(card_comparison(rows[0], data.benchmark.published_baseline, embedding_run))
    elif args.paper:
        print(beside_published(rows, data.benchmark))
    return 0


def card_comparison(row, baseline, run_path) -> str:
    """Our row beside the source document's baseline row, then what differs from the authors' run (from the run's
    record)."""
    from mmrhub.records.meta import meta_path
    from mmrhub.records.meta import read_meta
    from mmrhub.scoring.output.tables import beside_baseline
    from mmrhub.scoring.published_table import baseline_differences

    lines = baseline_differences(baseline, read_meta(meta_path(run_path)))
    return (
        beside_baseline(row, baseline)
        + "\n\nWhat differs from the authors' run:\n"
        + "\n".join(f"- {line}" for line in lines)
    )
