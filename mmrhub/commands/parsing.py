"""The one parser class and help formatter of every mmrhub parser: each option's default in its help, no silent
abbreviations, and a mistyped option refused by the subcommand it was given to, with the option meant."""

import argparse
import copy
import difflib


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Descriptions kept as written; each option's help ends with its default, unless it has none worth showing
    (None, a switch's False) or its help already says it."""

    def _format_action(self, action):
        if not action.help and _default(action) is not None:  # argparse shows no help line for help=None
            action = copy.copy(action)
            action.help = f"default: {_default(action)}"
        return super()._format_action(action)

    def _get_help_string(self, action):
        text, default = action.help or "", _default(action)
        if default is None or "default" in text or text == argparse.SUPPRESS:
            return text
        return f"{text} (default: {default})"


def _default(action):
    """The default as help shows it, or None where there is none worth showing (None, a switch's False, a required
    positional's)."""
    if action.default in (None, False, argparse.SUPPRESS):
        return None
    if not action.option_strings and action.nargs not in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
        return None
    if isinstance(action.default, (list, tuple)):
        return ",".join(map(str, action.default)).replace("%", "%%")
    return "%(default)s"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with ``HelpFormatter``, without abbreviations (``--by-cat`` is not ``--by-category``),
    that refuses unknown arguments itself: argparse would leave them to the top-level parser, whose usage and
    error say nothing of the subcommand. Subparsers are made of the same class."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        """As argparse's, but an argument this parser and its subcommand do not know is an error here."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{suggestion(self, extras)}")
        return namespace, extras


def suggestion(parser: argparse.ArgumentParser, extras: list) -> str:
    """' (did you mean --by-category?)' for the first unknown option that starts or resembles one of ``parser``'s."""
    known = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    for arg in extras:
        flag = arg.split("=", 1)[0]
        if not flag.startswith("--"):
            continue
        meant = [option for option in known if option.startswith(flag)] or difflib.get_close_matches(flag, known, 3)
        if meant:
            return f" (did you mean {' or '.join(meant[:3])}?)"
    return ""
