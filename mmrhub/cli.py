"""The ``mmrhub`` command: each subcommand lives in ``mmrhub.commands.<name>``."""

import argparse
import importlib
import sys

COMMANDS = ["info", "export", "push", "retrieve", "evaluate", "oracle", "compare"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mmrhub", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"mmrhub.commands.{name}").register(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
