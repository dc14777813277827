"""What both builders' caches share: keys on the tables' bytes, and entries that vouch for themselves.

datasets reuses a cache entry found under its key, whatever it holds. Each entry written here carries
``entry.json`` (its key and the size of each Arrow file); an entry without it, under another key, or cut short is
removed and rebuilt. A full disk under the cache is said in words, naming the cache folder, where datasets would
say "An error occurred while generating the dataset".
"""

import errno
import json
import os
import shutil
import stat
from typing import Optional

import xxhash

_HASH_CHUNK = 1 << 20
ENTRY = "entry.json"


class VouchedCache:
    """A mixin for a ``datasets`` builder: put it before the builder class."""

    def download_and_prepare(self, *args, **kwargs):
        """datasets' preparation, reusing only an entry that vouches for itself; a full disk is said in words."""
        if not args and "output_dir" not in kwargs and not vouched(self._output_dir, self.hash):
            shutil.rmtree(self._output_dir)  # damaged, or another key's: datasets would trust it, so rebuild
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

    def _download_and_prepare(self, *args, **kwargs):
        super()._download_and_prepare(*args, **kwargs)
        # Here _output_dir is the incomplete folder, renamed into place with the rows once datasets is done.
        vouch(self._output_dir, self.hash)


def content_hash(path: str) -> str:
    """xxh3-128 of a file's bytes, read into one reused buffer (a copy per chunk costs more than the hash)."""
    digest, buffer = xxhash.xxh3_128(), bytearray(_HASH_CHUNK)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        while size := f.readinto(buffer):
            digest.update(view[:size])
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


def vouched(folder: str, key: str) -> bool:
    """Whether a local cache entry may be reused: absent, or its manifest names ``key`` and the sizes of its files."""
    if "://" in folder or not os.path.isdir(folder):
        return True
    try:
        with open(os.path.join(folder, ENTRY), encoding="utf-8") as f:
            manifest = json.load(f)
        files = manifest["files"]
        return manifest["key"] == key and all(os.path.getsize(os.path.join(folder, n)) == files[n] for n in files)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def vouch(folder: str, key: str) -> None:
    """Write the manifest of a local cache entry: its key and the size of each Arrow file."""
    if "://" in folder:
        return
    files = {
        name: os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder) if name.endswith(".arrow")
    }
    with open(os.path.join(folder, ENTRY), "w", encoding="utf-8") as f:
        json.dump({"key": key, "files": files}, f)


def disk_full(err: BaseException) -> Optional[OSError]:
    """The "no space left" or "quota exceeded" error behind ``err``, if any."""
    while err is not None:
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            return err
        err = err.__cause__ or err.__context__
    return None
