"""Where a run's bytes come from: a file, or standard input ('-'), and the byte-order mark to skip. A UTF-8 file is
read in place; a compressed (gzip, bz2, xz) or UTF-16 one, and standard input, are decoded to UTF-8 first (by
``mmr_inputs``)."""

import os
import sys
from dataclasses import dataclass
from typing import Optional

import pyarrow as pa

from mmr_inputs import HEAD_SIZE
from mmr_inputs import encoding_of
from mmr_inputs import open_regular
from mmr_inputs import read_utf8

BOM = b"\xef\xbb\xbf"
STDIN = "-"
STDIN_NAME = "<stdin>"


@dataclass
class RunSource:
    """A run file, or standard input's bytes; ``name`` is how messages and the run name it."""

    name: str
    data: Optional[bytes] = None  # the decoded bytes (standard input, a compressed or UTF-16 file); None: the file

    @classmethod
    def of(cls, path) -> "RunSource":
        """The file at ``path``, or standard input for '-' (read whole now: it can be read only once); an
        ``mmr_inputs.InputError`` for what is not a regular file or not text."""
        if str(path) == STDIN:
            return cls(STDIN_NAME, read_utf8(STDIN_NAME, sys.stdin.buffer))
        name = str(path)
        with open_regular(name) as handle:
            if encoding_of(name, handle.read(HEAD_SIZE)) in ("utf-8", "utf-8-sig"):
                return cls(name)  # pyarrow's readers stream it from its path
            handle.seek(0)
            return cls(name, read_utf8(name, handle))

    def head(self, size: int = 1 << 16) -> bytes:
        """The first ``size`` bytes."""
        if self.data is not None:
            return self.data[:size]
        with open_regular(self.name) as handle:
            return handle.read(size)

    def read(self, bom: int) -> bytes:
        """The whole run without its first ``bom`` bytes."""
        if self.data is not None:
            return self.data[bom:]
        with open_regular(self.name) as handle:
            return handle.read()[bom:]

    def size(self, bom: int) -> int:
        """The run's size in bytes, without its first ``bom`` bytes."""
        return (len(self.data) if self.data is not None else os.path.getsize(self.name)) - bom

    def read_into(self, buffer: memoryview, bom: int) -> None:
        """Fill ``buffer`` (``size(bom)`` bytes) with the run after its first ``bom`` bytes."""
        if self.data is not None:
            buffer[:] = memoryview(self.data)[bom:]
            return
        with open_regular(self.name) as handle:
            handle.seek(bom)
            handle.readinto(buffer)

    def stream(self):
        """What pyarrow's readers open: the file's path (they stream it), or a reader over standard input's bytes."""
        return self.name if self.data is None else pa.BufferReader(self.data)
