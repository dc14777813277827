"""Fixtures shared by both builders' tests: a file system whose change times follow the modification times."""

import os
import types

import pytest


@pytest.fixture
def ctime_follows_mtime(monkeypatch):
    """``os.stat`` of anything under the folders added to the returned list reports ctime = mtime, as sshfs and
    FAT/exFAT do (``bindfs --ctime-from-mtime``): an edit with its mtime restored then leaves size, times and inode
    as they were."""
    folders, real = [], os.stat

    def stat(path, *args, **kwargs):
        result = real(path, *args, **kwargs)
        if not isinstance(path, (str, os.PathLike)) or not any(
            os.fspath(path).startswith(str(folder)) for folder in folders
        ):
            return result
        fields = {name: getattr(result, name) for name in dir(result) if name.startswith("st_")}
        return types.SimpleNamespace(**{**fields, "st_ctime": result.st_mtime, "st_ctime_ns": result.st_mtime_ns})

    monkeypatch.setattr(os, "stat", stat)
    return folders
