"""What each image's bytes hash to: part of the keys of the corpus embeddings and rerank scores, and of a run's
record, so that vectors, scores and records vouch for the images they were computed from, not only their names.

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

FILE = "digests.json"
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
    data = data.to_pylist() if data.null_count < len(data) else [None] * len(paths)
    digests = [NO_IMAGE] * len(paths)
    local = defaultdict(list)  # folder -> [(row, file name)]
    archives = defaultdict(list)  # archive url -> [(row, member)]
    for row, path in enumerate(paths):
        if data[row] is not None:
            digests[row] = "xxh3:" + mmr_cache.bytes_hash(data[row])
        elif path is None:
            continue
        elif "::" in path or "://" in path:
            member, _, target = path.partition("::")
            protocol, _, member = member.rpartition("://")
            archives[(protocol, target)].append((row, member))
        else:
            folder, name = os.path.split(os.path.abspath(path))
            local[folder].append((row, name))
    for folder, rows in local.items():
        for (row, _), digest in zip(rows, FolderDigests(folder, cache_dir).digests([name for _, name in rows])):
            digests[row] = digest
    for (protocol, target), rows in archives.items():
        for (row, _), digest in zip(rows, member_digests(protocol, target, [member for _, member in rows])):
            digests[row] = digest
    return digests


def member_digests(protocol: str, target: str, members: list) -> list:
    """``crc32:<crc>:<size>`` of each archive member, from the directory of the archive that serves
    ``protocol://<member>::<target>``, read afresh (a file system instance cached earlier in this process may hold
    the directory of an archive since rewritten); the bytes' xxh3-128 for a file system without a zip directory."""
    import fsspec

    cached, _ = fsspec.core.url_to_fs(f"{protocol}://{members[0]}::{target}")
    fs = fsspec.filesystem(protocol, skip_instance_cache=True, **cached.storage_options)
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


def stat_signature(state: os.stat_result) -> list:
    """What must be unchanged for a remembered digest to stand: device, inode, size, modification and change
    times (ns)."""
    return [state.st_dev, state.st_ino, state.st_size, state.st_mtime_ns, state.st_ctime_ns]


class FolderDigests:
    """The digests of the images in one folder, remembered between runs in the cache entry of that folder."""

    def __init__(self, folder: str, cache_dir=None):
        self.folder = folder
        self.key = mmr_cache.key_of("image-digests", folder)
        self.entry = Path(cache_dir or default_dir()) / self.key

    def remembered(self) -> dict:
        """{file name: stat signature + [digest]} from the folder's entry; empty when absent or not vouching."""
        import json

        if mmr_cache.read_entry(self.entry, self.key) is None:
            return {}
        try:
            files = json.loads((self.entry / FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return files if isinstance(files, dict) else {}

    def digests(self, names: list) -> list:
        """``xxh3:<hash>`` of each file in ``names``: remembered where its stat is unchanged, else hashed (and
        remembered unless written within ``SETTLE_NS``). A missing or unreadable image raises, naming it."""
        known = self.remembered()
        changed = False
        out = []
        for name in names:
            path = os.path.join(self.folder, name)
            try:
                signature = stat_signature(os.stat(path))
                found = known.get(name)
                if found is not None and found[:-1] == signature:
                    out.append(found[-1])
                    continue
                digest = "xxh3:" + mmr_cache.content_hash(path)
            except OSError as err:
                raise OSError(err.errno, f"cannot read the image {path}: {err.strerror}") from None
            out.append(digest)
            if max(signature[3], signature[4]) < time.time_ns() - SETTLE_NS:
                known[name] = signature + [digest]
                changed = True
            elif known.pop(name, None) is not None:
                changed = True
        if changed:
            self.save(known)
        return out

    def save(self, known: dict) -> None:
        """Remember ``known``; a cache that cannot be written is skipped (every file is hashed next time)."""
        import json

        try:
            with new_entry(self.entry, self.key, {"folder": self.folder}) as work:
                (work / FILE).write_text(json.dumps(known, separators=(",", ":")), encoding="utf-8")
        except OSError:
            pass
