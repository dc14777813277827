"""What a push records of the files it wrote (``.mmrhub/manifest.json`` in the repo): each file's bytes as the Hub
names them, so that a later push acts on a file only while it still holds those bytes.

The Hub lists every file with its git blob id (``list_repo_tree``'s ``blob_id``: the SHA-1 of ``blob <size>\\0``
and the bytes), and a file kept in LFS also with the sha256 of its bytes (its git blob is then the LFS pointer).
A push records both of every file it uploads, computed from the bytes it sends, so a file matches whichever way
the Hub stored it: the same blob id, or the same LFS sha256 and size.
"""

import hashlib
import json
import re
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Optional

MANIFEST = ".mmrhub/manifest.json"
WRITTEN_BY = "mmrhub push"
_BLOB_ID = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Digest:
    """A file's bytes as the Hub names them: size, git blob id, and sha256 (an LFS file's, or of bytes we send)."""

    size: int
    blob_id: str
    sha256: Optional[str] = None

    def same_bytes(self, other: "Digest") -> bool:
        """Whether two digests name the same bytes: the same blob id, or the same sha256 and size."""
        if self.blob_id == other.blob_id:
            return True
        return self.sha256 is not None and self.sha256 == other.sha256 and self.size == other.size

    def as_json(self) -> dict:
        """The manifest's entry for the file."""
        return {"blob_id": self.blob_id, "sha256": self.sha256, "size": self.size}


def digest_file(path: Path) -> Digest:
    """The digest of a local file, read once; a file that changes size while read is named."""
    size = path.stat().st_size
    blob, sha256, seen = hashlib.sha1(b"blob %d\x00" % size), hashlib.sha256(), 0
    with open(path, "rb") as source:
        while chunk := source.read(_CHUNK):
            blob.update(chunk)
            sha256.update(chunk)
            seen += len(chunk)
    if seen != size:
        raise OSError(f"{path} changed while it was read ({size:,} bytes listed, {seen:,} read): push again.")
    return Digest(size, blob.hexdigest(), sha256.hexdigest())


def hub_digest(entry) -> Digest:
    """A ``list_repo_tree`` file entry's digest: its blob id, and its LFS sha256 where it has one."""
    lfs = getattr(entry, "lfs", None)
    return Digest(int(entry.size), entry.blob_id, getattr(lfs, "sha256", None) if lfs is not None else None)


@dataclass
class Manifest:
    """An earlier push's manifest: the digest of each file it wrote (``records``), or, from a push of mmrhub before
    blob ids were recorded, only their paths (``legacy``: nothing is known of their bytes, so none is ours)."""

    records: dict = field(default_factory=dict)  # path -> Digest
    legacy: set = field(default_factory=set)


def manifest_bytes(records: dict) -> bytes:
    """The manifest of a push: the digest of each file it uploads that mmrhub wrote (``records``: path -> Digest)."""
    return json.dumps(
        {
            "written_by": WRITTEN_BY,
            "about": "The files the last `mmrhub push` uploaded to this repo, with their git blob ids and sha256. "
            "The next push deletes a file it does not upload again only while the file still has these bytes, and "
            "no other file.",
            "files": {path: records[path].as_json() for path in sorted(records)},
        },
        indent=1,
    ).encode("utf-8")


def parse_manifest(data: bytes, where: str) -> Manifest:
    """An earlier push's manifest; one mmrhub did not write, or written by another tool, is refused by name (and
    nothing is deleted)."""
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        found = None
    if not isinstance(found, dict):
        raise ValueError(_not_ours(where, "it is not a JSON object"))
    if found.get("written_by") != WRITTEN_BY:
        raise ValueError(_not_ours(where, f"its written_by is {_shown(found.get('written_by'))}, not {WRITTEN_BY!r}"))
    files = found.get("files")
    if isinstance(files, list) and all(isinstance(path, str) for path in files):
        return Manifest(legacy=set(files))
    if not isinstance(files, dict):
        raise ValueError(_not_ours(where, "its `files` is not an object of paths"))
    records = {}
    for path, record in files.items():
        record = record if isinstance(record, dict) else {}
        size, blob_id, sha256 = record.get("size"), record.get("blob_id"), record.get("sha256")
        valid = isinstance(size, int) and not isinstance(size, bool) and size >= 0
        valid = valid and isinstance(blob_id, str) and _BLOB_ID.fullmatch(blob_id)
        if not valid or not (sha256 is None or (isinstance(sha256, str) and _SHA256.fullmatch(sha256))):
            raise ValueError(_not_ours(where, f"its entry for {path!r} is not a size, a git blob id and a sha256"))
        records[path] = Digest(size, blob_id, sha256)
    return Manifest(records=records)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _not_ours(where: str, why: str) -> str:
    return (
        f"{where} is not a manifest mmrhub push wrote ({why}): it says which files a push may delete. Delete it on "
        "the Hub (the push then deletes nothing) or restore it, and push again."
    )
