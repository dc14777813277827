"""Errors in the user's terms: a folder given as a relative path is named as given, not as the absolute path the
builders and datasets resolve it to."""

import os
import re

FOLDER_OPTIONS = ("data_dir", "images_dir")  # the parsed arguments naming folders whose files errors quote
# The builders' keywords their messages name, as a command's flags
KEYWORD_FLAGS = (
    (re.compile(r"download_archives=True(?: \(m2kr\.load\))?"), "--download-archives"),
    (re.compile(r"read_timeout= \((--read-timeout SECONDS)\)"), r"\1"),
    (re.compile(r"check_etags=False \((--no-etag-check)\)"), r"\1"),
)


def as_given(message: str, args) -> str:
    """``message`` with each folder option's absolute path written back as the user wrote it, and the builders'
    keywords it names as the command's flags."""
    for keyword, flag in KEYWORD_FLAGS:
        message = keyword.sub(flag, message)
    for name in FOLDER_OPTIONS:
        given = getattr(args, name, None)
        if not given or "://" in given or os.path.isabs(given):
            continue
        shown = os.path.normpath(given)
        for absolute in dict.fromkeys((os.path.abspath(given), os.path.realpath(given))):
            # the folder itself, or a path under it: never a longer name that merely starts the same
            message = re.sub(re.escape(absolute) + r"(?=[\\/\s:;,)'\"]|\.(?!\w)|$)", lambda _: shown, message)
    return message
