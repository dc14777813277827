"""``mmrhub rerank``: rerank a baseline's candidate pools with a multimodal cross-encoder (torch imported in run)."""

from mmrhub.retrieve.rerank_options import add_arguments


def register(subparsers):
    parser = subparsers.add_parser(
        "rerank", help="score each (query, candidate) pair of a baseline run with a reranker, write and score the run"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from mmrhub.retrieve.rerank import run as run_rerank

    return run_rerank(args)
