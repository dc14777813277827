"""Build a folder aside and move it into place in one rename, so no reader ever sees half of it."""

import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path


def _partial_prefix(target: Path) -> str:
    return f".{target.name}.partial-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(target: Path) -> list:
    """Remove what killed exports of ``target`` left (``.<name>.partial-<pid>-*`` of processes now gone)."""
    removed = []
    prefix = _partial_prefix(target)
    for entry in target.parent.glob(prefix + "*"):
        pid = entry.name[len(prefix) :].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@contextmanager
def atomic_dir(target, overwrite: bool = False):
    """Yield an empty folder beside ``target``; on success it becomes ``target``, on any error it is removed.

    An existing ``target`` is refused unless ``overwrite``; then it is swapped out only once the new one is complete.
    """
    target = Path(target).absolute()
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} already exists; remove it or pass --overwrite.")
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(target)
    work = target.parent / f"{_partial_prefix(target)}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    try:
        yield work
        if overwrite and target.exists():
            old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
            os.rename(target, old)
            try:
                os.rename(work, target)
            except BaseException:
                os.rename(old, target)
                raise
            shutil.rmtree(old)
        else:
            os.rename(work, target)  # fails if another process made target meanwhile: never merged or replaced
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
