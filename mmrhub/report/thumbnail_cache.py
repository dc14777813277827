"""Thumbnails kept between reports under ``$HF_HOME/mmrhub/thumbnails/``, keyed on the image bytes' hash and the
thumbnail size. Each is an entry of ``mmr_cache``'s one format (``thumbnail.jpg`` and ``entry.json``, which holds
its hash), written aside and swapped in; an entry that does not vouch for its bytes is made again; an unwritable
cache is skipped."""

from pathlib import Path
from typing import Optional

import mmr_cache
from mmrhub.writing import new_entry

FORMAT = 2  # bump when the thumbnails change (size rule, quality, format, entry layout)
FILE = "thumbnail.jpg"


def cache_root() -> Path:
    """``$HF_HOME/mmrhub/thumbnails``."""
    return mmr_cache.cache_root("thumbnails")


class ThumbnailCache:
    """JPEG thumbnails by key, one entry each."""

    def __init__(self, folder: Optional[Path] = None):
        self.folder = (folder or cache_root()) / f"v{FORMAT}"

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def get(self, key: str) -> Optional[bytes]:
        """The cached JPEG, or None when absent or not vouching for its bytes (rebuilt by the caller)."""
        folder = self._entry(key)
        if mmr_cache.read_entry(folder, key) is None:
            return None
        try:
            return (folder / FILE).read_bytes()
        except OSError:
            return None

    def put(self, key: str, jpeg: bytes) -> None:
        """Write an entry whole (aside, then swapped in), so no reader sees half of one."""
        try:
            with new_entry(self._entry(key), key) as work:
                (work / FILE).write_bytes(jpeg)
        except OSError:
            return  # a read-only or full cache only costs the decoding next time
