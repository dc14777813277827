"""The one cache mechanism of mmrhub and both builders: where entries live, how they are keyed, and how an entry
vouches for its key and its bytes.

- **Root**: mmrhub's caches live under ``$HF_HOME/mmrhub/<cache>/`` (``cache_root``; HF_HOME read from the
  environment with huggingface_hub's default, without importing it). The builders' entries are datasets' own
  folders in its cache (``HF_DATASETS_CACHE``, by default ``$HF_HOME/datasets``).
- **Key**: ``key_of`` (xxh3-128 of what made the entry); where the key is content, ``content_hash`` of the bytes.
- **Entry**: a folder holding its files and ``entry.json``: the key, the size and xxh3-128 of every file, and what
  the cache keeps about the entry (``meta``). ``read_entry`` checks all of it: the key, the set of files (one extra
  or missing fails), each size and each hash. An entry that fails (copied from another key, a file swapped in from
  another entry, edited in place at the same size, cut short) is absent: it is rebuilt, never served.
- **Writing**: ``sign`` writes an entry's ``entry.json``; mmrhub's caches build an entry in a folder beside its
  place (``aside``), sign it and swap it in (``mmrhub.writing.new_entry``), so no reader sees half of one; the
  builders' entries are written by datasets and signed by ``VouchedCache``. ``move_into_place`` is the one move of a
  finished file or folder into its place: mmrhub's writes and the M2KR archive's directory cache use it.

A full disk or an unusable ``HF_HOME`` (read-only, not a folder) is said in one line naming the folder and what to
do (``unusable``); where datasets would say "An error occurred while generating the dataset", ``VouchedCache`` says
it too.
"""

import errno
import json
import mmap
import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Optional

import xxhash

ENTRY = "entry.json"
_HASH_CHUNK = 1 << 20
# Whether read_entry hashes each file's bytes; bench/cache_check.py turns it off to time what the check costs.
CHECK_BYTES = True


# --- root ------------------------------------------------------------------------------------------------------


def hf_home() -> Path:
    """``$HF_HOME``, defaulting as huggingface_hub's does (``$XDG_CACHE_HOME/huggingface``, else
    ``~/.cache/huggingface``)."""
    default = os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(os.path.expandvars(os.path.expanduser(os.environ.get("HF_HOME", default))))


def cache_root(name: str) -> Path:
    """``$HF_HOME/mmrhub/<name>``: the folder of one of mmrhub's caches."""
    return hf_home() / "mmrhub" / name


def unusable(err: OSError, folder, setting: str = "HF_HOME") -> Optional[str]:
    """One line saying why the cache folder ``folder`` cannot be used and what to do (point ``setting`` at another
    folder), for an error that says so (read-only, no permission, not a folder, full disk); None for any other."""
    why = {
        errno.EROFS: "is on a read-only file system",
        errno.EACCES: "is not writable by this user",
        errno.EPERM: "is not writable by this user",
        errno.ENOTDIR: "cannot be made: a file stands where one of its folders must be",
        errno.EEXIST: "cannot be made: a file stands where one of its folders must be",
        errno.ENOSPC: "has no space left",
        errno.EDQUOT: "is over its disk quota",
    }.get(getattr(err, "errno", None))
    if why is None:
        return None
    where = f"{folder} (HF_HOME is {hf_home()})"
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"The cache folder {where} {why}: free space there, or set {setting} to a folder on a disk with room."
    return f"The cache folder {where} {why}: set {setting} to a writable folder (e.g. {setting.split()[0]}=$HOME/hf)."


def cache_error(err: OSError, folder, setting: str = "HF_HOME") -> OSError:
    """``err`` as the one line of ``unusable`` (an OSError with the same errno), or ``err`` itself."""
    line = unusable(err, folder, setting)
    if line is None:
        return err
    said = OSError(line)
    said.errno = err.errno
    return said


# --- key -------------------------------------------------------------------------------------------------------


def key_of(*material) -> str:
    """An entry key: xxh3-128 of ``material`` (JSON values) in order."""
    return xxhash.xxh3_128(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def bytes_hash(data) -> str:
    """xxh3-128 of bytes in memory."""
    return xxhash.xxh3_128(data).hexdigest()


def content_hash(path) -> str:
    """xxh3-128 of a regular file's bytes, hashed from a read-only map of the file (no copy of its pages)."""
    with open(path, "rb", buffering=0) as f:
        if os.fstat(f.fileno()).st_size == 0:
            return xxhash.xxh3_128().hexdigest()
        try:
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return xxhash.xxh3_128(view).hexdigest()
        except (OSError, ValueError):  # a file system that cannot map: read it through one reused buffer
            digest, buffer = xxhash.xxh3_128(), bytearray(_HASH_CHUNK)
            chunk = memoryview(buffer)
            f.seek(0)
            while size := f.readinto(buffer):
                digest.update(chunk[:size])
            return digest.hexdigest()


def content_key(path: str):
    """A local table's key: xxh3-128 of its bytes; None when absent. A pipe or device is never opened here (it
    would wait for a writer): the reader refuses it by name."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a regular file"
    except FileNotFoundError:
        return None
    return content_hash(path)


def metadata_key(path: str):
    """A local archive's or folder's key: size, times and inode (hashing 121 GB of archives is out); None when
    absent."""
    try:
        state = os.stat(path)
    except FileNotFoundError:
        return None
    return [state.st_size, state.st_mtime_ns, state.st_ctime_ns, state.st_ino]


# --- entries ---------------------------------------------------------------------------------------------------


def sign(folder, key: str, meta=None) -> None:
    """Write ``folder``'s ``entry.json``: ``key``, each file's size and hash, and ``meta``."""
    folder = Path(folder)
    files = {}
    for name in sorted(os.listdir(folder)):
        path = folder / name
        if name != ENTRY and not path.is_dir():
            files[name] = [os.path.getsize(path), content_hash(path)]
    text = json.dumps({"key": key, "files": files, "meta": meta}, sort_keys=True)
    (folder / ENTRY).write_text(text, encoding="utf-8")


def read_entry(folder, key: str, check_bytes: Optional[bool] = None, others=()):
    """``(meta,)`` of the entry in ``folder`` when it vouches for ``key`` and for every byte it holds; None when
    absent or when it does not (it must then be rebuilt, never served). Files named with a prefix in ``others`` are
    not the entry's (another program's, which it keys itself) and are let be."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / ENTRY).read_text(encoding="utf-8"))
        files = manifest["files"]
        present = {name for name in os.listdir(folder) if not name.startswith(tuple(others))}
        if manifest["key"] != key or not isinstance(files, dict) or present != {ENTRY, *files}:
            return None
        check = CHECK_BYTES if check_bytes is None else check_bytes
        for name, (size, digest) in files.items():
            path = folder / name
            if not stat.S_ISREG(os.lstat(path).st_mode) or os.path.getsize(path) != size:
                return None
            if check and content_hash(path) != digest:
                return None
        return (manifest.get("meta"),)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- the builders' entries -------------------------------------------------------------------------------------


# What datasets itself writes into an entry after it is made: ``Dataset.map``'s results (``cache-<fingerprint>.arrow``,
# keyed by datasets) and their temporaries. Not the entry's: let be, neither vouched for nor a reason to rebuild.
DATASETS_OWN = ("cache-", "tmp")


class VouchedCache:
    """A mixin for a ``datasets`` builder (put it before the builder class): datasets reuses an entry found under
    its key, whatever it holds; this one reuses only an entry that vouches for its key and bytes.

    datasets writes the entry aside itself (``<entry>.incomplete``, renamed once done); ``entry.json`` is signed in
    it once the Arrow files and ``dataset_info.json`` are written.
    """

    def download_and_prepare(self, *args, **kwargs):
        """datasets' preparation (the entry was checked when the builder was made); a full disk is said in words."""
        try:
            super().download_and_prepare(*args, **kwargs)
        except Exception as err:
            full = disk_full(err)
            if not full:
                raise
            raise OSError(
                full.errno,
                f"No space left in the datasets cache {self._cache_dir_root} ({full.strerror}) while writing "
                f"{self.config.name}: free space there, or point HF_DATASETS_CACHE (or cache_dir=) at a folder on a "
                "disk with room.",
            ) from err

    def _build_cache_dir(self):
        # datasets reads the entry's dataset_info.json as soon as it knows the folder, and reuses the entry in
        # download_and_prepare: check it first, once per builder and folder (datasets may ask twice).
        folder = super()._build_cache_dir()
        if getattr(self, "_vouched_folder", None) != folder:
            drop_unvouched(folder, self.hash)
            self._vouched_folder = folder
        return folder

    def _save_info(self):
        super()._save_info()
        # Inside download_and_prepare _output_dir is the incomplete folder: the entry is complete once its info is.
        if "://" not in self._output_dir and self._output_dir.endswith(".incomplete"):
            sign(self._output_dir, self.hash)


def drop_unvouched(folder: str, key: str) -> None:
    """Remove the builder entry ``folder`` unless it vouches for ``key`` and its bytes: damaged, or another key's,
    datasets would trust it, so it is rebuilt."""
    if "://" not in folder and os.path.isdir(folder) and read_entry(folder, key, others=DATASETS_OWN) is None:
        shutil.rmtree(folder)


def disk_full(err: BaseException) -> Optional[OSError]:
    """The "no space left" or "quota exceeded" error behind ``err``, if any."""
    while err is not None:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return err
        err = err.__cause__ or err.__context__
    return None


# --- moving into place ------------------------------------------------------------------------------------------


def aside_prefix(target: Path, kind: str) -> str:
    """The name prefix of a folder beside ``target``: ``.<name>.partial-`` (being written) or ``.<name>.old-``
    (replaced, being removed); the writer's pid follows, then a tag."""
    return f".{target.name}.{kind}-"


def aside(target: Path, kind: str) -> Path:
    """A new name beside ``target`` of ``kind`` (``aside_prefix``), this process's and unique."""
    return target.parent / f"{aside_prefix(target, kind)}{os.getpid()}-{uuid.uuid4().hex[:8]}"


def move_into_place(work, target, replace: bool = False, before_replace=None) -> None:
    """Put the finished file or folder ``work`` at ``target`` in one rename, so that no reader sees half of it: the
    one move into place of mmrhub's writes (``mmrhub.writing``) and of the M2KR archive's directory cache.

    A file replaces what stands at ``target`` (``os.replace``; the writer checks first that it may). A folder never
    touches an existing ``target`` without ``replace`` (the rename fails: nothing is merged or replaced); with it,
    the existing one is renamed aside only now (``before_replace()`` may refuse first), put back if the swap fails,
    and then removed.
    """
    work, target = Path(work), Path(target)
    if not work.is_dir():
        os.replace(work, target)
        return
    if replace and (target.exists() or target.is_symlink()):
        if before_replace is not None:
            before_replace()
        old = aside(target, "old")
        os.rename(target, old)
        try:
            os.rename(work, target)
        except BaseException:
            os.rename(old, target)
            raise
        shutil.rmtree(old)
    else:
        os.rename(work, target)
