"""``mmrhub retrieve``: embed, retrieve and score (torch is imported only when the command runs)."""

from mmrhub.retrieve.options import add_arguments


def register(subparsers):
    parser = subparsers.add_parser(
        "retrieve", help="embed queries and corpus with a model, retrieve the exact top-k, write and score the run"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from mmrhub.retrieve.pipeline import run as run_pipeline

    return run_pipeline(args)
