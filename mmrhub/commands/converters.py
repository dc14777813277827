"""The commands' converters: an option's text as typed (or a run record's value, ``recorded.py``) -> its value, or
an error naming what was expected, in the words the metric modules use for their own arguments (``--k`` is refused
as the metric refuses ``k``: a test holds the two alike; each stands alone)."""

import argparse


def whole_number(low: int, high: int):
    """A converter accepting a whole number from ``low`` to ``high`` (an integer, or its text as typed)."""
    expected = f"expected a whole number from {low:,} to {high:,}"

    def convert(value) -> int:
        number = _integer(value)
        if number is None:
            raise argparse.ArgumentTypeError(f"{expected}, got {value!r}")
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{expected}, got {number:,}")
        return number

    return convert


def _integer(value):
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def real_number(low: float, high: float):
    """A converter accepting a number from ``low`` to ``high`` (a number, or its text as typed)."""
    expected = f"expected a number from {low} to {high}"

    def convert(value) -> float:
        try:
            number = None if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            number = None
        if number is None or not low <= number <= high:  # NaN fails the comparison too
            raise argparse.ArgumentTypeError(f"{expected}, got {value!r}")
        return number

    return convert


positive_int = whole_number(1, 10**6)  # sizes and counts
non_negative_int = whole_number(0, 1024)  # counts that may be none (DataLoader workers)
pixels = whole_number(1, 10**9)  # an image's pixel bounds
permutations = whole_number(1, 10**6)  # compare's sign flips: 100 times the default, minutes on the full data
seed = whole_number(0, 2**32 - 1)
weight = real_number(0.0, 1.0)
requests = whole_number(1, 1024)  # range requests open at once (mmr_remote.configure's bounds)
seconds = real_number(0.001, 86_400.0)  # a wait, at most a day


def query_id_list(text: str) -> list:
    """Query ids: comma-separated, or ``@FILE``, a file of one id a line (blank lines skipped)."""
    if not text.startswith("@"):
        return comma_list(str)(text)
    path = text[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            ids = [line.strip() for line in handle if line.strip()]
    except (OSError, UnicodeDecodeError) as err:
        raise argparse.ArgumentTypeError(f"cannot read the query ids in {path}: {err}") from None
    if not ids:
        raise argparse.ArgumentTypeError(f"{path} lists no query id (one a line expected)")
    return ids


def choice_of(choices):
    """A converter accepting only one of ``choices``."""

    def convert(value) -> str:
        if not isinstance(value, str) or value not in choices:
            raise argparse.ArgumentTypeError(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return convert


def comma_list(convert):
    """A comma-separated list, each element converted: one argument, so a list option never eats a run file."""

    def parse(text: str) -> list:
        parts = text.split(",")
        if not all(part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"expected a comma-separated list without empty elements, got {text!r}")
        return [convert(part.strip()) for part in parts]

    return parse
