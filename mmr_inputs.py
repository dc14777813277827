"""The one way in for input files (runs, tables, archives, images): regular files only, gzip, bz2 and xz (what the
standard library decompresses; a zip archive or zstd is named), byte-order marks and UTF-16 told from the first
bytes, bounded reads, and errors that name the file, the line (1-based) and the byte offset (and a table's row,
1-based too: ``row_name``).

Only the standard library is imported: the builders and their format modules import this file as a sibling, also as
``datasets`` < 4 loading scripts. Messages that quote data quote it with ``repr``, so no control character gets out.
"""

import codecs
import errno
import json
import os
import re
import stat
import zlib

# What a decoded (gunzipped or transcoded) input may hold at most, for a file the reader cannot size beforehand.
MAX_DECODED = 1 << 34
HEAD_SIZE = 1 << 16
GZIP_MAGIC = b"\x1f\x8b"
# Compressions read as their plain twin (a run's "gzip", "bz2" or "xz" encoding), and packings named instead.
COMPRESSIONS = {GZIP_MAGIC: "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
_PACKED = {
    b"PK\x03\x04": "a zip archive: unzip it first",
    b"PK\x05\x06": "an empty zip archive",
    b"\x28\xb5\x2f\xfd": "zstandard-compressed: decompress it first (zstd -d), or compress it with gzip, bz2 or xz",
    b"7z\xbc\xaf\x27\x1c": "a 7-Zip archive: extract it first",
}
# Longest first: UTF-32's little-endian mark starts with UTF-16's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# UTF-8 is checked a slice at a time, so that no copy of a large file is held as text.
_SLICE = 1 << 24
# What a path that is not a regular file is, by its mode's type (``file_kind``): the one table, for reading and writing.
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}
_LINE_END = re.compile(rb"\r\n|\r|\n")
_LOOP = "{path}: a loop of symbolic links (each leads to the next, never to a file); point it at the file to read."


def file_kind(mode: int) -> str:
    """What a path of ``stat`` mode ``mode`` that is not a regular file is, in plain words ("a FIFO", "a folder")."""
    return _KINDS.get(stat.S_IFMT(mode), "another kind of file")


class InputError(ValueError):
    """An input file that is not a regular file, is too large, or is not the text it should be; one line."""


def open_regular(path):
    """A binary handle on ``path``, refused unless it is a regular file (a FIFO, device or folder is named)."""
    # Non-blocking, so that opening a FIFO does not wait for a writer before it can be refused.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(_LOOP.format(path=path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{path}: not a regular file ({file_kind(mode)}); expected a file to read.")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def refuse_link_loop(path) -> None:
    """Refuse ``path`` in one line if it is a loop of symbolic links (Python 3.11's ``Path.resolve`` would raise a
    ``RuntimeError``); whatever else is wrong with it is left to the reader."""
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(_LOOP.format(path=path)) from None


def read_regular(path, follow: bool = True) -> bytes:
    """The bytes of the regular file at ``path`` (refused as :func:`open_regular` refuses), with one ``open``, one
    ``fstat`` and no file object; ``follow=False``: an ``OSError`` (ELOOP) where ``path`` itself is a link."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        if follow and err.errno == errno.ELOOP:  # without following, ELOOP only says that path is a link
            raise InputError(_LOOP.format(path=path)) from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise InputError(f"{path}: not a regular file ({file_kind(status.st_mode)}); expected a file to read.")
        chunks, size = [os.read(fd, status.st_size + 1)], status.st_size + 1
        while len(chunks[-1]) == size:  # the file grew since fstat: read on to its end
            chunks.append(os.read(fd, size))
        return b"".join(chunks) if len(chunks) > 1 else chunks[0]
    finally:
        os.close(fd)


def open_input(path: str, opener=None):
    """``path`` opened for reading: a local path through :func:`open_regular`, a URL through ``opener``."""
    if "://" in path:
        return opener(path)
    return open_regular(path)


def encoding_of(name: str, head: bytes) -> str:
    """'gzip', 'bz2' or 'xz', or the text encoding that the first bytes show ('utf-8' when no byte-order mark says
    otherwise).

    A zip archive (or zstd, 7-Zip) is refused by name. A NUL byte without a byte-order mark is refused: UTF-16 or
    UTF-32 without one (or binary data) cannot be told from UTF-8 with certainty.
    """
    for magic, compression in COMPRESSIONS.items():
        if head.startswith(magic):
            return compression
    for magic, packing in _PACKED.items():
        if head.startswith(magic):
            raise InputError(f"{name}: {packing}.")
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    nul = head.find(b"\x00")
    if nul >= 0:
        raise InputError(
            f"{name}: line {line_of(head, nul)}, byte offset {nul}: a NUL byte; expected UTF-8 text (UTF-16 needs a "
            "byte-order mark)."
        )
    return "utf-8"


def read_utf8(name: str, handle, limit: int = MAX_DECODED) -> bytes:
    """The rest of ``handle`` as UTF-8 bytes without a byte-order mark: gunzipped, transcoded from the encoding its
    mark names, checked; at most ``limit`` bytes, decoded."""
    data = _bounded(name, handle, limit)
    encoding = encoding_of(name, data[:HEAD_SIZE])
    if encoding in COMPRESSIONS.values():
        data, outer = decompress(name, data, encoding, limit), encoding
        encoding = encoding_of(name, data[:HEAD_SIZE])
        if encoding in COMPRESSIONS.values():
            raise InputError(f"{name}: {encoding} inside {outer}; expected one layer of compression.")
    if encoding == "utf-8-sig":
        return data[len(codecs.BOM_UTF8) :]
    if encoding != "utf-8":
        return decode(name, data, encoding).encode("utf-8")
    check_utf8(name, data)
    return data


def _bounded(name: str, handle, limit: int) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{name}: larger than {limit:,} bytes; expected at most that.")
    return data


def decompress(name: str, data: bytes, compression: str, limit: int = MAX_DECODED) -> bytes:
    """``data`` decompressed (every member or stream, as the command-line tools do), refused past ``limit`` bytes."""
    import bz2  # here: most inputs are plain
    import lzma

    start = {
        "gzip": lambda: zlib.decompressobj(16 + zlib.MAX_WBITS),
        "bz2": bz2.BZ2Decompressor,
        "xz": lzma.LZMADecompressor,
    }[compression]
    out, rest = [], data
    size = 0
    try:
        while rest:
            inflater = start()
            out.append(inflater.decompress(rest, limit - size + 1))
            size += len(out[-1])
            if size > limit or getattr(inflater, "unconsumed_tail", b""):  # it was asked for one byte past the limit
                raise InputError(f"{name}: decompresses to more than {limit:,} bytes; expected at most that.")
            if not inflater.eof:
                raise InputError(
                    f"{name}: the {compression} stream is truncated; expected a complete {compression} file."
                )
            rest = inflater.unused_data
    except (zlib.error, OSError, EOFError, lzma.LZMAError) as err:
        raise InputError(f"{name}: not a valid {compression} file ({err}).") from None
    return b"".join(out)


def decode(name: str, data: bytes, encoding: str = "utf-8", start: int = 0) -> str:
    """``data`` as text; an invalid byte is named by its line (1-based) and byte offset (``data`` starts at the
    file's byte ``start``)."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise decoding_error(name, data, err, start) from None


def require_utf8(name: str, handle) -> int:
    """Refuse a seekable ``handle`` whose first bytes show gzip, UTF-16 or UTF-32 (readers that stream a file take
    UTF-8 only); the length of its UTF-8 byte-order mark (0 without one), the handle left at its start."""
    if not handle.seekable():
        return 0
    head = handle.read(HEAD_SIZE)
    handle.seek(0)
    encoding = encoding_of(name, head)
    if encoding not in ("utf-8", "utf-8-sig"):
        raise InputError(f"{name}: {encoding.upper()} data; expected UTF-8 text.")
    return len(codecs.BOM_UTF8) if encoding == "utf-8-sig" else 0


def check_utf8(name: str, data, start: int = 0, line=None) -> None:
    """Refuse ``data`` unless it is UTF-8, naming the first invalid byte; ``start``: where ``data`` is in the file,
    ``line``: the line it is, if one line."""
    view = memoryview(data)
    begin = 0
    while begin < len(view):
        end = min(begin + _SLICE, len(view))
        while end < len(view) and end > begin and 0x80 <= view[end] < 0xC0:  # not inside a character
            end -= 1
        try:
            codecs.utf_8_decode(view[begin:end], "strict", True)
        except UnicodeDecodeError as err:
            err.start += begin
            raise decoding_error(name, data, err, start, line) from None
        begin = end


def decoding_error(name: str, data, err: UnicodeDecodeError, start: int = 0, line=None) -> InputError:
    """The one-line error for ``err``, raised decoding ``data`` (from the file's byte ``start``; ``line``: the line
    ``data`` is, if one line)."""
    encoding = err.encoding.upper().replace("-SIG", "")
    prefix = bytes(data[: err.start])
    if not encoding.startswith("UTF-8"):  # count the lines of the text, not of its bytes
        prefix = prefix.decode(err.encoding, "replace").encode("utf-8")
    byte = bytes(data[err.start : err.start + 1]).hex()
    line = line or line_of(prefix, len(prefix))
    return InputError(
        f"{name}: line {line}, byte offset {start + err.start}: 0x{byte} is not valid "
        f"{encoding}; expected UTF-8 text (or UTF-16 with a byte-order mark)."
    )


def line_of(data: bytes, offset: int) -> int:
    """The 1-based line holding byte ``offset`` (lines end with \\n, \\r\\n or \\r)."""
    return len(_LINE_END.findall(data, 0, offset)) + 1


def row_name(index: int) -> str:
    """How a message names the row at 0-based ``index`` of a table: "row N", counted from 1 as lines are."""
    return f"row {index + 1}"


def first_line(data: bytes) -> bytes:
    """The first line of ``data``, without its end (\\n, \\r\\n or \\r)."""
    return _LINE_END.split(data, 1)[0]


def load_json_file(path: str, limit: int = MAX_DECODED):
    """The JSON document in the file at ``path`` (UTF-8, UTF-16 with a byte-order mark, or compressed)."""
    with open_regular(path) as handle:
        return load_json(path, read_utf8(path, handle, limit))


def load_json(name: str, text, line=None, start: int = 0, unique_keys: bool = False):
    """Python's json, its errors one line naming the file, line and byte offset; ``line``: the line ``text`` is (a
    JSON Lines record) and ``start`` its byte offset in the file, else the text is the whole file.

    ``unique_keys``: refuse an object that repeats a key (Python keeps the last, pyarrow refuses the file).
    """
    at = "" if line is None else f" line {line}:"
    try:
        return json.loads(text, object_pairs_hook=_unique_object if unique_keys else None)
    except json.JSONDecodeError as err:
        offset = start + len(err.doc[: err.pos].encode("utf-8", "surrogatepass"))
        where = f"line {(line or 1) + err.lineno - 1}, column {err.colno}, byte offset {offset}"
        reason = err.msg
        if reason.endswith(" at"):  # Python's words point at the position: "Unterminated string starting at"
            reason += f" line {(line or 1) + err.lineno - 1}, column {err.colno}"
        if line is None and (reason.startswith("Unterminated") or err.pos >= len(err.doc.rstrip())):
            reason += "; the file ends first: is it cut short?"
        if reason == "Extra data":  # Python's words for a second value after the first
            reason += f": a second value here; expected one {'object a line' if line is not None else 'in the file'}"
        raise InputError(f"{name}: {where}: not valid JSON ({reason}).") from None
    except UnicodeDecodeError as err:
        raise decoding_error(name, text, err, start, line) from None
    except RecursionError:
        raise InputError(
            f"{name}:{at} JSON nested too deeply to read; expected lists and objects a few levels deep."
        ) from None
    except _RepeatedKey as err:
        raise InputError(f"{name}:{at} key {err.args[0]!r} appears twice in one object; expected each once.") from None
    except ValueError as err:  # an integer of more digits than Python converts
        raise InputError(f"{name}:{at} not valid JSON ({err}).") from None


class _RepeatedKey(Exception):
    pass


def _unique_object(pairs):
    record = dict(pairs)
    if len(record) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return record
