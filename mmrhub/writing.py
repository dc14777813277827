"""One way out: every file the program writes as a whole (runs, ``--json``, reports, dataset_infos.json) goes
through here. It is written to a temporary file beside the target, synced and renamed over it, so a reader, a
kill or a full disk never leaves half a file, and the previous file stays until the new one is complete. Only a
file may be replaced: a target that exists must be a regular file after following links (a FIFO, device or folder
is refused by name), a link is written through, and the replaced file keeps its mode; the command's own standard
output (``--json /dev/stdout``) is written to as a stream. A target that is one of the command's inputs (a file,
or any file under an input folder) is refused before any work, compared by path and by device and inode (a hard
link, a bind mount), and every error names the path. Nothing is put in place after a Ctrl-C.

Folders (exports, cache entries) are written aside and swapped in by ``write_folder``; a cache entry is such a
folder signed by ``mmr_cache`` before the swap (``new_entry``). Files and folders alike are put in place by
``mmr_cache.move_into_place``, the one mover, which the M2KR archive's directory cache uses too. (The builders'
cache entries are datasets' own folders, which datasets moves into place itself and ``mmr_cache.VouchedCache``
signs.)
"""

import errno
import os
import shutil
import stat
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from mmr_cache import aside
from mmr_cache import aside_prefix
from mmr_cache import move_into_place
from mmr_cache import sign
from mmr_inputs import file_kind

_TEMP = ".{name}.{pid}.{tag}.tmp"


def check_target(path, flag: str, inputs=(), example: str = "out.json") -> Path:
    """The target ``path`` of option ``flag``, checked before any work: in an existing folder, a regular file if
    it exists (after following links: a FIFO, device or folder is refused by name), and not one of ``inputs`` (the
    command's runs and data: a file, or a folder whose every file counts, e.g. an image folder; a URL is no local
    file, so no output can land on it, and is passed over)."""
    path = Path(path)
    if standard_stream(path) is not None:
        return path
    if _link_loop(path):
        raise ValueError(f"{flag} {path}: a loop of symbolic links (each leads to the next, never to a file).")
    if path.is_dir():
        raise IsADirectoryError(f"{flag} {path}: is a folder; give a file name, e.g. {path / example}.")
    if path.exists() and not path.is_file():
        raise ValueError(
            f"{flag} {path}: is {file_kind(path.stat().st_mode)}, not a file this command may replace; write to a file."
        )
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{flag} {path}: folder {path.parent} does not exist; create it first.")
    for source in local_paths(inputs):
        if writes_onto(path, source):
            raise ValueError(f"{flag} {path}: is {source}, one of this command's inputs; write elsewhere.")
    return path


def is_remote(path) -> bool:
    """Whether ``path`` names a URL (``https://``, ``hf://``) rather than a local file: ``Path`` would turn it into
    a relative path (``http:/host/...``) that names nothing the command reads."""
    return isinstance(path, str) and "://" in path


def local_paths(paths) -> list:
    """``paths`` as Paths, the URLs among them left out."""
    return [Path(path) for path in paths if path is not None and not is_remote(path)]


def _link_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as err:
        return err.errno == errno.ELOOP
    return False


def writes_onto(path, source) -> bool:
    """Whether writing ``path`` would replace ``source`` or a file under it, however either is reached: by its
    path after following links, or by device and inode (a hard link, a bind mount of the folder or of a folder
    under it, another path to the same file). Not seen: one file bind-mounted over another."""
    path, source = Path(path), Path(source)
    try:
        held = os.stat(source)
    except OSError:
        return False
    target = _existing_stat(path)
    if not stat.S_ISDIR(held.st_mode):
        return target is not None and os.path.samestat(target, held)
    real = Path(os.path.realpath(path))
    if real.is_relative_to(os.path.realpath(source)):
        return True
    folders = _folders(source, held)
    if any(_identity(_existing_stat(folder)) in folders for folder in real.parents):
        return True
    # a file with more than one name may have one under the folder; only then is every name there compared
    return target is not None and target.st_nlink > 1 and _holds(source, target)


def _existing_stat(path):
    try:
        return os.stat(path)
    except OSError:
        return None


def _identity(status) -> Optional[tuple]:
    return None if status is None else (status.st_dev, status.st_ino)


def _folders(folder: Path, held: os.stat_result) -> set:
    """(device, inode) of ``folder`` and of every folder under it (links not followed). A folder with a link count
    of 2 (its name and its own ``.``) has no folder inside, so it is not listed: an image folder of 30,000 files
    costs one ``stat`` here."""
    found, pending = {_identity(held)}, [(folder, held)]
    while pending:
        current, status = pending.pop()
        if status.st_nlink == 2:
            continue
        try:
            entries = list(os.scandir(current))
        except OSError:  # a folder this user cannot list holds nothing this command reads either
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                inner = entry.stat(follow_symlinks=False)
                found.add(_identity(inner))
                pending.append((entry.path, inner))
    return found


def _holds(folder, target: os.stat_result) -> bool:
    """Whether a file under ``folder`` (links not followed) is ``target``'s inode: a hard link into the folder. The
    inode is compared from the folder listing, so only a match costs a ``stat``."""
    pending = [folder]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.inode() == target.st_ino and os.path.samestat(entry.stat(follow_symlinks=False), target):
                return True
    return False


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; see the module's docstring."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path, data: bytes, sync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, fsync, rename. ``sync=False`` skips the
    fsync, for cache entries that are checked when read and rebuilt if a crash left them short. A link is written
    through (the link stays, the file it leads to is replaced); a replaced file keeps its mode; the command's own
    standard output or error (``/dev/stdout``) gets the bytes written to the stream."""
    path = Path(path)
    stream = standard_stream(path)
    if stream is not None:
        _write_stream(stream, data)
        return path
    if _link_loop(path):
        raise ValueError(f"cannot write {path}: a loop of symbolic links (each leads to the next, never to a file).")
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if path.exists() and not path.is_file():
        raise ValueError(
            f"cannot write {path}: it is {file_kind(path.stat().st_mode)}, not a file that may be replaced."
        )
    remove_stale_temporaries(path)
    temp = path.with_name(_TEMP.format(name=path.name, pid=os.getpid(), tag=uuid.uuid4().hex[:8]))
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else None
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        _not_interrupted()
        move_into_place(temp, path)
    except OSError as err:
        temp.unlink(missing_ok=True)
        kept = " (the previous file is unchanged)" if path.exists() else ""
        if err.errno == errno.ENOSPC:
            raise OSError(
                err.errno, f"No space left on device writing {path}{kept}; free some space or write elsewhere."
            ) from None
        raise OSError(err.errno, f"cannot write {path}{kept}: {err.strerror or err}") from None
    except KeyboardInterrupt:
        temp.unlink(missing_ok=True)
        raise
    return path


def _not_interrupted() -> None:
    """Raise ``KeyboardInterrupt`` if the command was sent Ctrl-C, even one a library swallowed: nothing is put in
    place after it. Only the ``mmrhub`` command installs the handler (``mmrhub.interrupts``); a library user's
    process keeps Python's own."""
    interrupts = sys.modules.get("mmrhub.interrupts")
    if interrupts is not None:
        interrupts.check()


def standard_stream(path) -> Optional[int]:
    """1 or 2 when ``path`` is this process's standard output or error (``/dev/stdout``, ``/dev/stderr``, or the
    file or terminal they are connected to), else None."""
    try:
        target = os.stat(path)
    except (OSError, ValueError):
        return None
    for fd in (1, 2):
        try:
            if os.path.samestat(target, os.fstat(fd)):
                return fd
        except OSError:  # the descriptor is closed
            continue
    return None


def _write_stream(fd: int, data: bytes) -> None:
    # what the command printed so far comes first; then the bytes straight to the descriptor, whole
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def remove_stale_temporaries(path: Path) -> list:
    """Remove the temporaries that killed writes of ``path`` left (``.<name>.<pid>.<tag>.tmp`` of processes now
    gone); nothing else is touched."""
    removed = []
    prefix = f".{path.name}."
    for entry in path.parent.glob(f"{prefix}*.tmp"):
        pid, _, tag = entry.name[len(prefix) : -len(".tmp")].partition(".")
        if (
            pid.isdigit()
            and len(tag) == 8
            and not process_alive(int(pid))
            and entry.is_file()
            and not entry.is_symlink()
        ):
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


# --- folders ---------------------------------------------------------------------------------------------------


@contextmanager
def new_entry(folder, key: str, meta=None):
    """Yield an empty folder to write an entry's files into; on success it is signed for ``key`` and swapped in
    at ``folder`` (replacing an entry that failed ``read_entry``), on any error removed."""
    remove_stale_asides(folder)
    with write_folder(folder, replace=True) as work:
        yield work
        sign(work, key, meta)


@contextmanager
def write_folder(target, replace: bool = False, before_replace=None):
    """Yield an empty folder beside ``target``; on success it becomes ``target`` in one rename, on any error it is
    removed, so no reader ever sees half of it.

    Without ``replace`` an existing ``target`` is never touched (the rename fails: never merged or replaced). With
    it, an existing one is renamed aside only once the new folder is complete (``before_replace()`` may refuse
    first), put back if the swap fails, and then removed.
    """
    target = Path(os.path.abspath(target))  # "." and "a/.." named as the folders they are
    target.parent.mkdir(parents=True, exist_ok=True)
    work = aside(target, "partial")
    work.mkdir()
    try:
        yield work
        _not_interrupted()
        move_into_place(work, target, replace, before_replace)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def remove_stale_asides(target, ours=lambda folder: True) -> list:
    """Remove what killed writes of ``target`` left beside it (``.<name>.partial-<pid>-*``, ``.<name>.old-<pid>-*``)
    of processes now gone, when ``ours(folder)``; nothing else is touched."""
    target, removed = Path(target), []
    for kind in ("partial", "old"):
        prefix = aside_prefix(target, kind)
        for entry in target.parent.glob(prefix + "*"):
            pid = entry.name[len(prefix) :].split("-")[0]
            if pid.isdigit() and not process_alive(int(pid)) and entry.is_dir() and not entry.is_symlink():
                if ours(entry):
                    shutil.rmtree(entry, ignore_errors=True)
                    removed.append(entry)
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process of this id runs (one of another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
