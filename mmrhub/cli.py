"""The ``mmrhub`` command."""

import argparse
import gc
import sys
import traceback

from mmrhub import __version__
from mmrhub.commands import baseline
from mmrhub.commands import compare
from mmrhub.commands import evaluate
from mmrhub.commands import export
from mmrhub.commands import info
from mmrhub.commands import oracle
from mmrhub.commands import push
from mmrhub.commands import report
from mmrhub.commands import rerank
from mmrhub.commands import reproduce
from mmrhub.commands import retrieve

DESCRIPTION = """\
Load, score and publish the MIPR and M2KR multimodal retrieval benchmarks.

  mmrhub evaluate mipr RUN [RUN ...]   score runs (official JSON, TREC, Kaggle CSV) into one table
  mmrhub oracle mipr BASELINE          the Candidate-pool Oracle row
  mmrhub compare mipr RUN_A RUN_B      per-query paired randomisation test
  mmrhub report mipr RUN [RUN ...] -o report.html   one HTML page: scores, plots, a gallery of thumbnails
  mmrhub reproduce mipr --data-dir DIR which readings of the open metric rules give the MIPR paper's table
  mmrhub retrieve mipr                 embed, retrieve and score with a model (needs the retrieve extra)
  mmrhub rerank mipr --candidates RUN  rerank a baseline's pools with a multimodal reranker (retrieve extra)
  mmrhub baseline mipr                 retrieve top-50, rerank, one table with the oracle (retrieve extra)
  mmrhub info mipr                     configs, features and row counts
  mmrhub export mipr OUT               a script-free Hub dataset repo (Parquet + card)
  mmrhub push OUT org/name             upload an export, or a metric folder as a Space

Every command works on the bundled sample without --data-dir, and says so."""

# Commands in the order --help lists them; each module exposes register(subparsers).
COMMANDS = (evaluate, oracle, compare, report, reproduce, retrieve, rerank, baseline, info, export, push)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmrhub", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"mmrhub {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        print("mmrhub: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a user's mistake or the environment's: one line, the traceback only on --debug
        if args.debug:
            traceback.print_exc()
        else:
            expected = isinstance(err, (ValueError, OSError))
            hint = "" if expected else f" ({type(err).__name__}; run `mmrhub --debug ...` for the traceback)"
            print(f"mmrhub {args.command}: error: {err}{hint}", file=sys.stderr)
        return 1


def console() -> None:
    """The ``mmrhub`` executable. The process ends right after ``main``: freezing the objects spares Python's
    shutdown collections a walk over all that numpy and pyarrow made (about 0.07 s, a tenth of a scoring call)."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console()
