"""Build a folder aside and move it into place in one rename, so no reader ever sees half of it.

Every folder built here carries ``MARKER`` (a hidden file ``push`` leaves home): only a folder with it is ever
replaced or cleared, so ``--overwrite`` can never delete a folder the export did not write.
"""

import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path


MARKER = ".mmrhub-export"
_MARKER_TEXT = "Written by `mmrhub export`; `mmrhub export --overwrite` may replace this folder.\n"


def _marked(folder: Path) -> bool:
    marker = folder / MARKER
    return folder.is_dir() and not folder.is_symlink() and marker.is_file() and not marker.is_symlink()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_replaceable(target: Path, protected=()):
    """Refuse to replace ``target`` unless an earlier export wrote it, and never one holding a ``protected`` folder."""
    real = target.resolve()
    for folder in protected:
        if _within(Path(folder).resolve(), real):
            raise FileExistsError(
                f"{target} holds the data being exported ({folder}): --overwrite would delete it. "
                "Choose an OUT folder outside the data folder."
            )
    if not _marked(target):
        raise FileExistsError(
            f"{target} was not written by `mmrhub export` (it has no {MARKER} file), so --overwrite will not "
            "replace it. Choose a new OUT folder, or remove this one yourself."
        )


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
        if pid.isdigit() and not _alive(int(pid)) and _marked(entry):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@contextmanager
def atomic_dir(target, overwrite: bool = False, protected=()):
    """Yield a folder beside ``target`` holding only ``MARKER``; on success it becomes ``target``, on any error it
    is removed.

    An existing ``target`` is refused unless ``overwrite`` and ``check_replaceable`` allows it; then it is swapped
    out only once the new one is complete.
    """
    target = Path(os.path.abspath(target))  # "." and "a/.." named as the folders they are
    if target.exists() or target.is_symlink():
        if not overwrite:
            raise FileExistsError(f"{target} already exists; remove it or pass --overwrite.")
        check_replaceable(target, protected)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(target)
    work = target.parent / f"{_partial_prefix(target)}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    (work / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
    try:
        yield work
        if overwrite and target.exists():
            check_replaceable(target, protected)  # again: it may have changed while the export ran
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
