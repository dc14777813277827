"""What each image's bytes hash to: part of the keys of the corpus embeddings and rerank scores, and of a run's
record, so that vectors, scores and records vouch for the images they were computed from, not only their names;
and the key of a local image's report thumbnail, so a cached one is found without reading the image.

- **A zip member** (M2KR's archives): its CRC-32 and size from the archive's directory, which the archive's file
  system reads once; every read of the member checks its bytes against that CRC (``m2kr_archive``), so the
  digest vouches for what is decoded. No member is read for it.
- **A local file** (MIPR's folders): xxh3-128 of its bytes, remembered per folder in a cache entry under
  ``$HF_HOME/mmrhub/image-digests/`` with the file's device, inode, size, modification and change times: a later
  run hashes again only the files whose ``stat`` differs. The kernel sets the change time on every write and no
  call sets it back, so an edit at the same size that restores the modification time is hashed again. A file
  written within ``SETTLE_NS`` of being hashed is not remembered, since an edit right after could leave every time
  unchanged (git's "racily clean" rule).
- **Bytes held in the table**: their xxh3-128.
"""

import os
import time
from collections import defaultdict
from pathlib import Path

import mmr_cache
from mmrhub.writing import new_entry

FILES = ("names", "stats", "digests")  # the arrays of a folder's entry, each NAME.npy
SETTLE_NS = 2_000_000_000  # files changed this recently are hashed but not remembered
NO_IMAGE = None


def default_dir() -> Path:
    """``$HF_HOME/mmrhub/image-digests``."""
    return mmr_cache.cache_root("image-digests")


def image_digests(dataset, column: str = "image", cache_dir=None) -> list:
    """One digest per row of ``dataset``'s ``column`` (an ``Image`` column of ``{"path", "bytes"}``): a string
    naming how it was made (``xxh3:`` or ``crc32:``), or None for a row without an image."""
    values = dataset.select_columns([column]).with_format("arrow")[:][column].combine_chunks()
    paths, data = values.field("path").to_pylist(), values.field("bytes")
    held = data.to_pylist() if data.null_count < len(data) else None
    digests = [NO_IMAGE] * len(paths)
    local = defaultdict(list)  # folder -> [(row, file name)]
    archives = defaultdict(list)  # (protocol, archive) -> [(row, member)]
    for row, path in enumerate(paths):
        if held is not None and held[row] is not None:
            digests[row] = "xxh3:" + mmr_cache.bytes_hash(held[row])
        elif path is None:
            continue
        elif "://" in path:
            member, _, target = path.partition("::")
            protocol, _, member = member.partition("://")
            archives[(protocol, target)].append((row, member))
        else:
            folder, _, name = (path if path.startswith("/") else os.path.abspath(path)).rpartition("/")
            local[folder].append((row, name))
    for folder, rows in local.items():
        for (row, _), digest in zip(rows, FolderDigests(folder, cache_dir).digests([name for _, name in rows])):
            digests[row] = digest
    for (protocol, target), rows in archives.items():
        for (row, _), digest in zip(rows, member_digests(protocol, target, [member for _, member in rows])):
            digests[row] = digest
    return digests


def local_file_digests(paths: list, cache_dir=None) -> list:
    """``xxh3:<hash>`` of each of ``paths`` that is a local regular file, remembered per folder as for
    ``image_digests``; None for any other (an archive member, a missing file, a folder, None, a file that went
    away meanwhile): the caller reads those itself and says what is wrong."""
    digests = [NO_IMAGE] * len(paths)
    local = defaultdict(list)  # folder -> [(row, file name)]
    for row, path in enumerate(paths):
        if path is not None and "://" not in path and os.path.isfile(path):
            folder, _, name = (path if path.startswith("/") else os.path.abspath(path)).rpartition("/")
            local[folder].append((row, name))
    for folder, rows in local.items():
        try:
            found = FolderDigests(folder, cache_dir).digests([name for _, name in rows])
        except OSError:  # removed or made unreadable since: read (and reported) by the caller
            continue
        for (row, _), digest in zip(rows, found):
            digests[row] = digest
    return digests


def member_digests(protocol: str, target: str, members: list) -> list:
    """``crc32:<crc>:<size>`` of each archive member, from the directory of the archive that serves
    ``protocol://<member>::<target>``: for local parts read afresh (a file system instance cached earlier in this
    process may hold the directory of an archive since rewritten), for remote ones the instance that reads the
    members; the bytes' xxh3-128 for a file system without a zip directory."""
    import fsspec

    fs, _ = fsspec.core.url_to_fs(f"{protocol}://{members[0]}::{target}")
    if "://" not in target:  # local parts: their directory read again (remote ones: what a user moves counts)
        fs = fsspec.filesystem(protocol, skip_instance_cache=True, **fs.storage_options)
    archive = getattr(fs, "zip", None)
    if archive is None:
        return ["xxh3:" + mmr_cache.bytes_hash(fs.cat_file(member)) for member in members]
    digests = []
    for member in members:
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise FileNotFoundError(f"{member} is not a member of {target.split('|')[0]}") from None
        digests.append(f"crc32:{info.CRC:08x}:{info.file_size}")
    return digests


def stat_signatures(paths: list):
    """(n, 5) int64: what must be unchanged for a remembered digest to stand (device, inode, size, modification and
    change times in ns), for each of ``paths``; an error naming an image that cannot be read."""
    import numpy as np

    rows = []
    for path in paths:
        try:
            state = os.stat(path)
        except OSError as err:
            raise OSError(err.errno, f"cannot read the image {path}: {err.strerror}") from None
        rows.append((state.st_dev, state.st_ino, state.st_size, state.st_mtime_ns, state.st_ctime_ns))
    return np.array(rows, dtype=np.int64).reshape(len(rows), 5)


class FolderDigests:
    """The digests of the images in one folder, remembered between runs in the cache entry of that folder: file
    names (``names.npy``), their stat signatures (``stats.npy``) and digests (``digests.npy``)."""

    def __init__(self, folder: str, cache_dir=None):
        self.folder = folder
        self.key = mmr_cache.key_of("image-digests", folder)
        self.entry = Path(cache_dir or default_dir()) / self.key

    def remembered(self):
        """(names, signatures, digests) from the folder's entry; None when absent or not vouching for its bytes."""
        import numpy as np

        if mmr_cache.read_entry(self.entry, self.key) is None:
            return None
        try:
            arrays = [np.load(self.entry / f"{name}.npy", allow_pickle=False) for name in FILES]
        except (OSError, ValueError):
            return None
        names, stats, digests = arrays
        if stats.shape != (len(names), 5) or digests.shape != (len(names),):
            return None
        return names.tolist(), stats, digests.tolist()

    def digests(self, names: list) -> list:
        """``xxh3:<hash>`` of each file in ``names``: remembered where its stat signature is unchanged, else hashed
        (and remembered unless written within ``SETTLE_NS``)."""
        import numpy as np

        paths = [f"{self.folder}/{name}" for name in names]
        stats = stat_signatures(paths)
        digests = [None] * len(names)
        remembered = np.zeros(len(names), dtype=bool)  # what the entry holds already, stat and all
        known = self.remembered()
        if known is not None and known[0]:
            where = dict(zip(known[0], range(len(known[0]))))
            rows = np.array([where.get(name, -1) for name in names], dtype=np.int64)
            remembered = (rows >= 0) & (known[1][rows] == stats).all(axis=1)
            for row in np.flatnonzero(remembered).tolist():
                digests[row] = known[2][rows[row]]
        for row in [row for row, digest in enumerate(digests) if digest is None]:
            digests[row] = mmr_cache.content_hash(paths[row])
        settled = stats[:, 3:].max(axis=1, initial=0) < time.time_ns() - SETTLE_NS
        fresh = np.flatnonzero(settled & ~remembered).tolist()
        if known is None or fresh:
            # the folder's other remembered files are kept: calls naming different files (two reports' galleries)
            # would otherwise each forget the other's
            merged = {} if known is None else dict(zip(known[0], zip(known[1].tolist(), known[2])))
            merged.update((names[row], (stats[row].tolist(), digests[row])) for row in fresh)
            self.save(list(merged), [stat for stat, _ in merged.values()], [digest for _, digest in merged.values()])
        return ["xxh3:" + digest for digest in digests]

    def save(self, names: list, stats, digests: list) -> None:
        """Remember these files; a cache that cannot be written is skipped (they are hashed again next time)."""
        import numpy as np

        try:
            with new_entry(self.entry, self.key, {"folder": self.folder}) as work:
                stats = np.array(stats, np.int64).reshape(-1, 5)  # (0, 5) when nothing is remembered
                arrays = (np.array(names, np.str_), stats, np.array(digests, np.str_))
                for name, values in zip(FILES, arrays):
                    np.save(work / f"{name}.npy", values)
        except OSError:
            pass
