"""Text from data, made safe to print: control characters (an escape sequence in an id can retitle or clear a
terminal) are shown as ``\\x1b``-style escapes; newlines and tabs of the message itself stay."""

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab escaped."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)
