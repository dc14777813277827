"""Errors in the user's terms: a folder given as a relative path is named as given, not as the absolute path the
builders and datasets resolve it to."""

import os
import re

FOLDER_OPTIONS = ("data_dir", "images_dir")  # the parsed arguments naming folders whose files errors quote


def as_given(message: str, args) -> str:
    """``message`` with each folder option's absolute path written back as the user wrote it."""
    for name in FOLDER_OPTIONS:
        given = getattr(args, name, None)
        if not given or "://" in given or os.path.isabs(given):
            continue
        shown = os.path.normpath(given)
        for absolute in dict.fromkeys((os.path.abspath(given), os.path.realpath(given))):
            # the folder itself, or a path under it: never a longer name that merely starts the same
            message = re.sub(re.escape(absolute) + r"(?=[\\/\s:;,)'\"]|\.(?!\w)|$)", lambda _: shown, message)
    return message
