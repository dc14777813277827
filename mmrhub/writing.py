"""One way out: every file the program writes as a whole (runs, ``--json``, reports, dataset_infos.json) goes
through here. It is written to a temporary file beside the target, synced and renamed over it, so a reader, a
kill or a full disk never leaves half a file, and the previous file stays until the new one is complete. A target
that is one of the command's inputs is refused before any work, and every error names the path.

Folders (exports, cache entries) are written aside and swapped in by ``write_folder``: one implementation, in the
top-level ``mmr_cache`` so that the builders' cache can use it too, re-used here.
"""

import errno
import os
import uuid
from pathlib import Path

from mmr_cache import process_alive
from mmr_cache import remove_stale_asides  # noqa: F401 - the folder part of the one way out, re-used
from mmr_cache import write_folder  # noqa: F401

_TEMP = ".{name}.{pid}.{tag}.tmp"


def check_target(path, flag: str, inputs=(), example: str = "out.json") -> Path:
    """The target ``path`` of option ``flag``, checked before any work: not a folder, in an existing folder, and
    not the same file as any of ``inputs`` (the command's runs and data files)."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{flag} {path}: is a folder; give a file name, e.g. {path / example}.")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{flag} {path}: folder {path.parent} does not exist; create it first.")
    if path.exists():
        for source in inputs:
            if Path(source).exists() and os.path.samefile(path, source):
                raise ValueError(f"{flag} {path}: is {source}, one of this command's inputs; write elsewhere.")
    return path


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; see the module's docstring."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path, data: bytes, sync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file beside it, fsync, rename. ``sync=False`` skips the
    fsync, for cache entries that are checked when read and rebuilt if a crash left them short."""
    path = Path(path)
    remove_stale_temporaries(path)
    temp = path.with_name(_TEMP.format(name=path.name, pid=os.getpid(), tag=uuid.uuid4().hex[:8]))
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as err:
        temp.unlink(missing_ok=True)
        kept = " (the previous file is unchanged)" if path.exists() else ""
        if err.errno == errno.ENOSPC:
            raise OSError(
                err.errno, f"No space left on device writing {path}{kept}; free some space or write elsewhere."
            ) from None
        raise OSError(err.errno, f"cannot write {path}{kept}: {err.strerror or err}") from None
    return path


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
