"""Where a run's bytes come from: a file, or standard input ('-'), and the byte-order mark to skip."""

import os
import sys
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa

BOM = b"\xef\xbb\xbf"
STDIN = "-"
STDIN_NAME = "<stdin>"


@dataclass
class RunSource:
    """A run file, or standard input's bytes; ``name`` is how messages and the run name it."""

    name: str
    data: Optional[bytes] = None  # standard input's bytes; None: the file at ``name``

    @classmethod
    def of(cls, path) -> "RunSource":
        """The file at ``path``, or standard input for '-' (read whole now: it can be read only once)."""
        if str(path) == STDIN:
            return cls(STDIN_NAME, sys.stdin.buffer.read())
        return cls(str(path))

    def head(self, size: int = 1 << 16) -> bytes:
        """The first ``size`` bytes."""
        if self.data is not None:
            return self.data[:size]
        with open(self.name, "rb") as handle:
            return handle.read(size)

    def read(self, bom: int) -> bytes:
        """The whole run without its first ``bom`` bytes."""
        if self.data is not None:
            return self.data[bom:]
        with open(self.name, "rb") as handle:
            return handle.read()[bom:]

    def size(self, bom: int) -> int:
        """The run's size in bytes, without its first ``bom`` bytes."""
        return (len(self.data) if self.data is not None else os.path.getsize(self.name)) - bom

    def read_into(self, buffer: memoryview, bom: int) -> None:
        """Fill ``buffer`` (``size(bom)`` bytes) with the run after its first ``bom`` bytes."""
        if self.data is not None:
            buffer[:] = memoryview(self.data)[bom:]
            return
        with open(self.name, "rb") as handle:
            handle.seek(bom)
            handle.readinto(buffer)

    def stream(self):
        """What pyarrow's readers open: the file's path (they stream it), or a reader over standard input's bytes."""
        return self.name if self.data is None else pa.BufferReader(self.data)
