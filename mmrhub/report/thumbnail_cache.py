"""Thumbnails kept between reports under ``$HF_HOME/mmrhub/thumbnails/``, keyed on the image bytes' hash and the
thumbnail size. Entries are written atomically; a broken entry is made again; an unwritable cache is skipped."""

import os
from pathlib import Path
from typing import Optional

from mmrhub.writing import write_bytes

FORMAT = 1  # bump when the thumbnails change (size rule, quality, format)


def cache_root() -> Path:
    """``$HF_HOME/mmrhub/thumbnails``, with HF_HOME defaulting as huggingface_hub's does (without importing it)."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface"
    return Path(os.environ.get("HF_HOME", default)) / "mmrhub" / "thumbnails"


class ThumbnailCache:
    """JPEG thumbnails by key, one file each."""

    def __init__(self, folder: Optional[Path] = None):
        self.folder = (folder or cache_root()) / f"v{FORMAT}"

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.jpg"

    def get(self, key: str) -> Optional[bytes]:
        """The cached JPEG, or None when absent or broken (no JPEG start and end markers: rebuilt by the caller)."""
        try:
            data = self._path(key).read_bytes()
        except OSError:
            return None
        return data if data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9" else None

    def put(self, key: str, jpeg: bytes) -> None:
        """Write an entry whole (``mmrhub.writing``), so no reader sees half of one."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, jpeg, sync=False)  # a damaged entry fails the JPEG check on reading
        except OSError:
            return  # a read-only or full cache only costs the decoding next time
