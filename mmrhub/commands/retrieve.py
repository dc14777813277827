"""``mmrhub retrieve`` and ``scripts/embed_retrieve.py``: embed, retrieve and score (torch imported only in run)."""

import argparse

from mmrhub.commands.arguments import add_cache_arguments
from mmrhub.commands.arguments import add_data_arguments
from mmrhub.commands.arguments import add_device_arguments
from mmrhub.commands.arguments import add_dtype_argument
from mmrhub.commands.arguments import add_output_argument
from mmrhub.commands.arguments import add_preset_arguments
from mmrhub.commands.arguments import add_query_subset_arguments
from mmrhub.commands.arguments import add_run_file_arguments
from mmrhub.commands.arguments import data_options
from mmrhub.commands.arguments import model_settings
from mmrhub.commands.arguments import output_options
from mmrhub.commands.arguments import run_options
from mmrhub.commands.converters import positive_int
from mmrhub.commands.converters import weight
from mmrhub.commands.parsing import Parser
from mmrhub.retrieve.options import BACKEND_CHOICES
from mmrhub.retrieve.options import DEFAULT_MODELS
from mmrhub.retrieve.options import PRESET_DEFAULT_MODELS
from mmrhub.retrieve.options import SEARCHES
from mmrhub.retrieve.options import RetrieveOptions


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Every argument of ``retrieve``."""
    add_data_arguments(parser)
    add_output_argument(parser)

    model = parser.add_argument_group("model")
    model.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="sentence-transformers",
        help="sentence-transformers (Qwen3-VL-Embedding and other fused models) or transformers (CLIP-style)",
    )
    model.add_argument(
        "--model",
        help=f"Hub id or local folder (default: {DEFAULT_MODELS['sentence-transformers']} for "
        f"sentence-transformers, {DEFAULT_MODELS['transformers']} for transformers, "
        f"{PRESET_DEFAULT_MODELS['preflmr']} with --preset preflmr)",
    )
    model.add_argument("--revision", help="Hub revision (branch, tag or commit) of --model")
    add_dtype_argument(model)
    add_preset_arguments(model, "embedding")
    model.add_argument(
        "--text-weight",
        type=weight,
        default=0.5,
        help="fusion of separate image and text vectors: normalize((1-w)*image + w*text); image-only inputs use the "
        "image vector (default 0.5; unused by models that embed image+text as one input)",
    )
    model.add_argument("--batch-size", type=positive_int, default=32, help="inputs per forward pass")
    add_device_arguments(model)

    search = parser.add_argument_group("search")
    search.add_argument("--top-k", type=positive_int, default=100, help="ranked ids written per query")
    search.add_argument("--search", choices=SEARCHES, default="torch", help="exact top-k engine (faiss: IndexFlatIP)")
    search.add_argument(
        "--candidates",
        metavar="BASELINE",
        help="rerank setting: a run file (e.g. MIPR's <data>/baseline/qwen3_vl_embedding_8b_top50.json) whose "
        "ranked items are each query's candidate pool; only the items its pools name are embedded (or taken from "
        "the whole corpus's cached vectors)",
    )
    add_query_subset_arguments(parser.add_argument_group("query subset"))

    add_cache_arguments(parser.add_argument_group("cache"), "corpus embedding", "$HF_HOME/mmrhub/embeddings")
    add_run_file_arguments(parser)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The standalone parser of ``scripts/embed_retrieve.py``."""
    parser = Parser(
        prog="embed_retrieve.py",
        description="Embed queries and corpus, retrieve the exact top-k, write and score the run.",
    )
    return add_arguments(parser)


def register(subparsers):
    """Add ``retrieve``."""
    parser = subparsers.add_parser(
        "retrieve", help="embed queries and corpus with a model, retrieve the exact top-k, write and score the run"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def retrieve_options(args) -> RetrieveOptions:
    """The RetrieveOptions the parsed arguments describe (--model defaults to the backend's model)."""
    return RetrieveOptions(
        data=data_options(args),
        model=args.model or PRESET_DEFAULT_MODELS.get(args.preset) or DEFAULT_MODELS[args.backend],
        backend=args.backend,
        revision=args.revision,
        settings=model_settings(args),
        text_weight=args.text_weight,
        batch_size=args.batch_size,
        top_k=args.top_k,
        search=args.search,
        candidates=args.candidates,
        queries=args.queries,
        query_ids=tuple(args.query_ids or ()),
        runtime=run_options(args),
        output=output_options(args),
    )


def run(args) -> int:
    """Embed, retrieve, write and score."""
    options = retrieve_options(args)
    from mmrhub.retrieve.pipeline import run as run_pipeline

    return run_pipeline(options)
