"""Build a folder aside and move it into place in one rename, so no reader ever sees half of it.

Every folder built here carries ``MARKER`` (a hidden file ``push`` leaves home) listing every file the export
wrote: only a folder with it is ever replaced or cleared, and only while it holds nothing else, so ``--overwrite``
never deletes a file the export did not write (a ``.git`` folder, notes added later): it refuses instead.
"""

import json
import os
from contextlib import contextmanager
from pathlib import Path

from mmrhub.writing import remove_stale_asides
from mmrhub.writing import write_folder

MARKER = ".mmrhub-export"
_MARKER_NOTE = (
    "Written by `mmrhub export`; `mmrhub export --overwrite` may replace this folder while it holds these files only."
)
MAX_NAMED = 3


def _marked(folder: Path) -> bool:
    marker = folder / MARKER
    return folder.is_dir() and not folder.is_symlink() and marker.is_file() and not marker.is_symlink()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _files(folder: Path) -> set:
    """Every file and link under ``folder`` (folders themselves excluded), as relative POSIX paths."""
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_symlink() or not path.is_dir()}


def written_files(folder: Path):
    """The files the export that wrote ``folder`` lists in its marker, or None for a marker that lists none."""
    try:
        listed = json.loads((folder / MARKER).read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        return None
    return set(listed) if isinstance(listed, list) else None


def _sign(work: Path) -> None:
    """Write the marker listing every file now in ``work``: what a later ``--overwrite`` may remove."""
    files = sorted(_files(work) - {MARKER})
    (work / MARKER).write_text(json.dumps({"note": _MARKER_NOTE, "files": files}, indent=1) + "\n", encoding="utf-8")


def check_replaceable(target: Path, protected=()):
    """Refuse to replace ``target`` unless an earlier export wrote it and it holds nothing else, and never one
    holding a ``protected`` folder."""
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
    listed = written_files(target)
    if listed is None:
        raise FileExistsError(
            f"{target} was written by an older `mmrhub export` that did not list its files, so --overwrite cannot "
            "tell them from yours. Remove the folder yourself, or choose a new OUT folder."
        )
    others = sorted(_files(target) - listed - {MARKER})
    if others:
        named = ", ".join(others[:MAX_NAMED]) + (
            f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else ""
        )
        raise FileExistsError(
            f"{target} holds {len(others)} file(s) the export did not write ({named}): --overwrite never removes them. "
            "Move them out, or choose a new OUT folder."
        )


def remove_stale_partials(target: Path) -> list:
    """Remove what killed exports of ``target`` left: ``.<name>.partial-<pid>-*`` (a half-written export) and
    ``.<name>.old-<pid>-*`` (the replaced one, killed before its removal) of processes now gone, marked by us."""
    return remove_stale_asides(target, ours=_marked)


@contextmanager
def atomic_dir(target, overwrite: bool = False, protected=()):
    """Yield a folder beside ``target`` holding only ``MARKER``; on success it becomes ``target``, on any error it
    is removed (``write_folder``, the one way a folder is written).

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
    # check_replaceable again before the swap: the target may have changed while the export ran.
    with write_folder(target, replace=overwrite, before_replace=lambda: check_replaceable(target, protected)) as work:
        (work / MARKER).write_text(json.dumps({"note": _MARKER_NOTE, "files": []}) + "\n", encoding="utf-8")
        yield work
        _sign(work)
