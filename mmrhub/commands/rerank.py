"""``mmrhub rerank`` and ``scripts/rerank.py``: rerank a baseline's candidate pools with a multimodal cross-encoder
(torch imported only in run)."""

import argparse

from mmrhub.commands.arguments import add_data_arguments
from mmrhub.commands.arguments import add_output_argument
from mmrhub.commands.arguments import add_reranker_arguments
from mmrhub.commands.arguments import add_run_file_arguments
from mmrhub.commands.arguments import data_options
from mmrhub.commands.arguments import model_settings
from mmrhub.commands.arguments import output_options
from mmrhub.commands.arguments import run_options
from mmrhub.commands.parsing import Parser
from mmrhub.retrieve.options import DEFAULT_RERANKER
from mmrhub.retrieve.options import RerankOptions


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Every argument of ``rerank``."""
    add_data_arguments(parser)
    parser.add_argument(
        "--candidates",
        metavar="RUN",
        required=True,
        help="the baseline run whose ranked items are each query's pool (e.g. an embedding top-50)",
    )
    add_output_argument(parser)
    model = parser.add_argument_group("reranker")
    model.add_argument(
        "--model",
        default=DEFAULT_RERANKER,
        help=f"sentence-transformers CrossEncoder: Hub id or local folder (default: {DEFAULT_RERANKER})",
    )
    add_reranker_arguments(model)
    add_run_file_arguments(parser)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The standalone parser of ``scripts/rerank.py``."""
    parser = Parser(
        prog="rerank.py",
        description="Rerank each query's candidate pool with a multimodal cross-encoder, write and score the run.",
    )
    return add_arguments(parser)


def register(subparsers):
    """Add ``rerank``."""
    parser = subparsers.add_parser(
        "rerank", help="score each (query, candidate) pair of a baseline run with a reranker, write and score the run"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def rerank_options(args) -> RerankOptions:
    """The RerankOptions the parsed arguments describe."""
    return RerankOptions(
        data=data_options(args),
        candidates=args.candidates,
        model=args.model,
        revision=args.revision,
        settings=model_settings(args),
        batch_size=args.batch_size,
        top_n=args.top_n,
        chunk_queries=args.chunk_queries,
        shared_prefix=not args.no_shared_prefix,
        runtime=run_options(args),
        output=output_options(args),
    )


def run(args) -> int:
    """Rerank, write and score."""
    options = rerank_options(args)
    from mmrhub.retrieve.rerank.pipeline import run as run_rerank

    return run_rerank(options)
