"""The ``mmrhub`` command."""

from mmrhub import interrupts  # noqa: I001  (first of all: Ctrl-C during every import below)

import argparse
import contextlib
import gc
import importlib
import os
import sys
import traceback

from mmrhub import __version__
from mmrhub.commands.messages import as_given
from mmrhub.commands.parsing import Parser
from mmrhub.terminal import printable

DESCRIPTION = """\
Load, score and publish the MIPR and M2KR multimodal retrieval benchmarks.

  mmrhub evaluate mipr RUN [RUN ...]   score runs (official JSON, TREC, Kaggle CSV) into one table
  mmrhub oracle mipr BASELINE          the Candidate-pool Oracle row
  mmrhub compare mipr RUN RUN [...]    paired randomisation tests of every pair (or --baseline), Holm-corrected
  mmrhub report mipr RUN [RUN ...] -o report.html   one HTML page: scores, plots, a gallery of thumbnails
  mmrhub reproduce mipr --data-dir DIR which interpretations of the open metric rules give the MIPR paper's table
  mmrhub retrieve mipr                 embed, retrieve and score with a model (needs the retrieve extra)
  mmrhub rerank mipr --candidates RUN  rerank a baseline's pools with a multimodal reranker (retrieve extra)
  mmrhub baseline mipr                 retrieve top-50, rerank, one table with the oracle (retrieve extra)
  mmrhub info mipr                     configs, features and row counts
  mmrhub export mipr OUT               a script-free Hub dataset repo (Parquet + card)
  mmrhub leaderboard mipr RUN [RUN ...] -o DIR   a leaderboard Space: the runs scored and compared, uploads
  mmrhub push OUT org/name             upload an export, a metric folder or a board as a Space

Every command works on the bundled sample without --data-dir, and says so."""

# Commands in the order --help lists them; each is the module mmrhub.commands.<name>, exposing register(subparsers).
COMMANDS = (
    "evaluate", "oracle", "compare", "report", "reproduce", "retrieve", "rerank", "baseline", "rerun", "mteb", "info",
    "export", "leaderboard", "push",
)  # fmt: skip

DEBUG = "--debug"
SIGPIPE_EXIT = 141  # 128 + SIGPIPE: what a Unix tool returns when the reader of its output went away


def build_parser(commands=COMMANDS) -> argparse.ArgumentParser:
    """The parser of ``commands`` (default: every command), importing only their modules."""
    parser = Parser(prog="mmrhub", description=DESCRIPTION)  # its subcommands' parsers are Parsers too
    parser.add_argument("--version", action="version", version=f"mmrhub {__version__}")
    parser.add_argument(DEBUG, action="store_true", help="show the full traceback of an error (anywhere on the line)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands:
        importlib.import_module(f"mmrhub.commands.{command}").register(subparsers)
    refuse_empty_strings(parser)
    return parser


def non_empty(text: str) -> str:
    """A text argument that says something: an empty one (an unset shell variable) is an error, not a default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty (an unset variable?); give a value or leave the option out")
    return text


def refuse_empty_strings(parser: argparse.ArgumentParser) -> None:
    """Give every plain text option and argument of ``parser`` and its subcommands the ``non_empty`` type."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                refuse_empty_strings(subparser)
        elif action.type is None and action.choices is None and action.nargs != 0:
            action.type = non_empty


def without_debug(argv: list) -> tuple:
    """(argv without ``--debug``, whether it was there): the flag may stand anywhere before a ``--``."""
    end = argv.index("--") if "--" in argv else len(argv)
    kept = [arg for arg in argv[:end] if arg != DEBUG] + argv[end:]
    return kept, len(kept) != len(argv)


def commands_of(argv: list) -> tuple:
    """The commands whose parsers ``argv`` needs: the one it starts with, so that a command imports and builds only
    its own (what building every parser costs each start: bench/README.md); every command for anything else (--help,
    a misspelt name)."""
    return (argv[0],) if argv and argv[0] in COMMANDS else COMMANDS


# The flags that set how remote archives are read (mmr_remote.configure's keywords), for the command's time.
REMOTE_SETTINGS = ("max_requests", "read_timeout", "check_etags")


@contextlib.contextmanager
def remote_settings(args):
    """``--max-requests``, ``--read-timeout`` and ``--no-etag-check`` for the command (and the workers it starts)."""
    given = {name: getattr(args, name, None) for name in REMOTE_SETTINGS}
    if all(value is None for value in given.values()):
        yield
        return
    from mmr_remote import settings  # fsspec: only for the commands given one of these flags

    with settings(**given):
        yield


def main(argv=None) -> int:
    """Run one ``mmrhub`` command; a mistake prints one line and returns 1 (the traceback only with --debug)."""
    argv, debug = without_debug(list(sys.argv[1:] if argv is None else argv))
    args = build_parser(commands_of(argv)).parse_args(argv)
    args.debug = debug
    try:
        with remote_settings(args):
            code = args.func(args) or 0
        interrupts.check()  # a Ctrl-C that a library swallowed still ends the command
        sys.stdout.flush()  # a closed pipe shows here, where it is handled, rather than at the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("mmrhub: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `mmrhub evaluate ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush cannot fail again
        return SIGPIPE_EXIT
    except Exception as err:  # a user's mistake or the environment's: one line, the traceback only on --debug
        if interrupts.received():  # an error Ctrl-C caused (an import it cut short) is the interruption
            print("mmrhub: interrupted", file=sys.stderr)
            return 130
        if args.debug:
            traceback.print_exc()
        else:
            expected = isinstance(err, (ValueError, OSError))
            hint = "" if expected else f" ({type(err).__name__}; run `mmrhub --debug ...` for the traceback)"
            print(printable(as_given(f"mmrhub {args.command}: error: {err}{hint}", args)), file=sys.stderr)
        return 1


def console() -> None:
    """The ``mmrhub`` executable. The process ends right after ``main``: freezing the objects spares Python's
    shutdown collections a walk over all that numpy and pyarrow made (bench/README.md has the figure)."""
    code = main()
    interrupts.finished()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console()
