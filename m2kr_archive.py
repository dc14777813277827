"""M2KR's split zip archives read in place, as the fsspec protocol ``splitzip``.

``splitzip://<member>::<part>|<part>|...`` opens one member of a zip stored as byte-level parts (``split -b``),
on any fsspec filesystem, without extracting or joining them. Members are untrusted: names, links, encryption,
compression method, size and ratio are checked, and every read is bounded and checked against its CRC-32.

Needs only fsspec, so a DataLoader worker started with "spawn" resolves the protocol through the package's
``fsspec.specs`` entry point without importing ``datasets``. ``m2kr.py`` imports it (and, as a datasets loading
script, has it copied beside itself).
"""

import bisect
import io
import os
import re
import stat
import struct
import zipfile
import zlib

import fsspec
from fsspec.archive import AbstractArchiveFileSystem

# The format's error, from the module beside this one (m2kr.py explains the backslash).
# fmt: off
if __package__: \
from .m2kr_format import M2krDataError
else:
    from m2kr_format import M2krDataError
if __package__: \
from .mmr_inputs import InputError, open_regular
else:
    from mmr_inputs import InputError, open_regular
# fmt: on

# Bounds on an archive member (members are untrusted); the real screenshots average 2.6 MB.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_COMPRESSION_RATIO = 100

PROTOCOL = "splitzip"
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version .. sizes), name length, extra length
_END_SIGNATURE = b"PK\x05\x06"
_END_SIZE = 22  # the end record without its comment, which is at most 65,535 bytes
_INFLATE_CHUNK = 1 << 20


class PartsFile(io.RawIOBase):
    """Read-only seekable view of byte-level parts (``split -b``) as one file."""

    def __init__(self, files, sizes, names):
        super().__init__()
        self._size, self._pos = sum(sizes), 0
        self._files, self.sizes, self._names = files, sizes, names
        self._starts = [sum(sizes[:index]) for index in range(len(sizes))]

    def readable(self):
        """Always readable."""
        return True

    def seekable(self):
        """Always seekable."""
        return True

    def tell(self):
        """The position in the joined parts."""
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        """Move to a position of the joined parts; past the end reads nothing."""
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer):
        """Fill ``buffer`` from the parts the position spans; a part shorter than listed is an error."""
        view = memoryview(buffer).cast("B")
        wanted = max(0, min(len(view), self._size - self._pos))
        done = 0
        while done < wanted:
            index = bisect.bisect_right(self._starts, self._pos) - 1
            start, size = self._starts[index], self.sizes[index]
            part = self._files[index]
            part.seek(self._pos - start)
            got = part.readinto(view[done : done + min(wanted - done, start + size - self._pos)])
            if not got:
                raise M2krDataError(f"{self._names[index]}: ends before its listed size of {size:,} bytes.")
            done += got
            self._pos += got
        return done

    def pread(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset``, read with one copy when they lie in one part (nearly every member)."""
        index = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[index]
        if offset + size <= start + self.sizes[index]:
            self._files[index].seek(offset - start)
            data = self._files[index].read(size)
        else:
            self.seek(offset)
            data = self.read(size)
        if len(data) != size:
            raise M2krDataError(f"{self._names[index]}: ends before its listed size of {self.sizes[index]:,} bytes.")
        return data

    def part_at(self, offset: int) -> str:
        """The name of the part holding byte ``offset``."""
        return self._names[max(0, bisect.bisect_right(self._starts, offset) - 1)]

    def close(self):
        """Close every part."""
        for part in self._files:
            part.close()
        super().close()


def open_parts(fs, parts) -> PartsFile:
    """The parts on ``fs``, in order, as one file; a missing part is named."""
    sizes = []
    for part in parts:
        try:
            sizes.append(fs.size(part))
        except FileNotFoundError:
            raise FileNotFoundError(f"Archive part {part} is missing.") from None
    return PartsFile([_open_part(fs, part) for part in parts], sizes, parts)


def _open_part(fs, part: str):
    """A local part through ``mmr_inputs`` (a FIFO or device is refused, not waited on), others through ``fs``."""
    if "file" not in fs.protocol:
        return fs.open(part, "rb")
    try:
        return open_regular(part)
    except InputError as err:
        raise M2krDataError(str(err)) from None


def open_zip(virtual: PartsFile, parts) -> zipfile.ZipFile:
    """Read the zip directory of the joined parts, checking that no part is truncated and every member."""
    sizes = virtual.sizes
    label = parts[0] if len(parts) == 1 else f"{parts[0]} (+{len(parts) - 1} parts)"
    if sum(sizes) < zipfile.sizeEndCentDir + zipfile.sizeEndCentDir64Locator:  # below that zipfile seeks before 0
        raise M2krDataError(
            f"{label}: {sum(sizes):,} bytes{' in all' if len(parts) > 1 else ''}, too short for a zip archive holding "
            "any file (the download is empty or cut short): download it again."
        )
    try:
        archive = zipfile.ZipFile(virtual)
    except zipfile.BadZipFile as err:
        extra = _extra_parts(parts)
        if extra:
            raise M2krDataError(
                f"{label}: {len(extra)} more part(s) continue it beside {parts[-1]}: "
                f"{', '.join(name.rsplit('/', 1)[-1] for name in extra)}. The archive was split into "
                f"{len(parts) + len(extra)} parts and is read as {len(parts)}: join them all and split the result into "
                f"{len(parts)} (e.g. cat the parts > one.zip; split -n {len(parts)} -a 3 --numeric-suffixes=1 one.zip "
                f"{parts[-1].rsplit('/', 1)[-1][:-3]})."
            ) from None
        order = _order_problem(virtual, parts)
        if order:
            raise M2krDataError(order) from None
        if "not a zip file" in str(err):
            raise M2krDataError(
                f"{parts[-1]}: no zip end record at its end: the part is truncated, or the parts "
                f"({', '.join(parts)}) are incomplete or out of order."
            ) from None
        raise M2krDataError(f"{_suspect_part(parts, sizes)} ({err}).") from None
    # A byte-level split zip starts with its first member; zipfile shifts offsets by the bytes it finds missing.
    first = min((info.header_offset for info in archive.infolist()), default=0)
    if first != 0:
        order = _order_problem(virtual, parts)
        raise M2krDataError(order or f"{_suspect_part(parts, sizes)}: {abs(first):,} bytes missing or extra.")
    if not archive.infolist() and archive.start_dir:
        # zipfile takes the last end record it finds, so one hidden in the real one's comment hides every member.
        raise M2krDataError(
            f"{label}: the zip end record read lists no members, yet {archive.start_dir:,} bytes precede it: it is "
            "not the archive's own (a fake one in the archive comment?) or the archive is corrupt; refusing it."
        )
    for info in archive.infolist():
        check_member(info, label)
    return archive


def _extra_parts(parts) -> list:
    """Local files beside the last part that continue its numbering (``.004``, ``.005``, ...)."""
    number = re.search(r"\.(\d+)$", parts[-1])
    if not number or "://" in parts[-1]:
        return []
    stem, width, found = parts[-1][: number.start(1)], len(number.group(1)), []
    following = int(number.group(1)) + 1
    while os.path.isfile(f"{stem}{following:0{width}d}"):
        found.append(f"{stem}{following:0{width}d}")
        following += 1
    return found


def _end_records(tail: bytes) -> list:
    """Where in ``tail`` a zip end record starts whose comment runs exactly to the end of ``tail``."""
    found, at = [], tail.rfind(_END_SIGNATURE)
    while at >= 0:
        if at + _END_SIZE <= len(tail) and at + _END_SIZE + struct.unpack_from("<H", tail, at + 20)[0] == len(tail):
            found.append(at)
        at = tail.rfind(_END_SIGNATURE, 0, at)
    return found


def _tail(virtual: PartsFile, end: int) -> bytes:
    """The bytes before ``end`` that may hold a zip end record and its comment."""
    size = min(end, _END_SIZE + 0xFFFF)
    return virtual.pread(end - size, size) if size else b""


def _order_problem(virtual: PartsFile, parts):
    """Parts out of order, if a part other than the last ends with the zip end record; else None."""
    sizes, end = virtual.sizes, 0
    for part, size in zip(parts[:-1], sizes[:-1]):
        end += size
        tail = _tail(virtual, end)
        if _end_records(tail[len(tail) - min(size, len(tail)) :]):  # this part's own bytes
            listed = ", ".join(f"{name} ({length:,} bytes)" for name, length in zip(parts, sizes))
            return (
                f"Archive parts look out of order: {part} ends with the zip end record, which only the last part "
                f"({parts[-1]}) holds; the parts as found: {listed}. Give each part back the name it was split with."
            )
    return None


def _suspect_part(parts, sizes) -> str:
    """Name the truncated part: all parts but the last have the same size in a byte-level split."""
    full = max(sizes[:-1], default=sizes[-1])
    for part, size in zip(parts[:-1], sizes[:-1]):
        if size < full:
            return f"Archive part {part} is truncated: {size:,} bytes where the other parts have {full:,}"
    if len(parts) == 1:
        return f"Archive {parts[0]} is truncated or corrupt"
    listed = ", ".join(f"{part} ({size:,} bytes)" for part, size in zip(parts, sizes))
    return f"Archive parts do not add up to the zip they were split from; one is truncated: {listed}"


def check_member(info: zipfile.ZipInfo, archive: str):
    """Refuse members that could escape a folder, link elsewhere, or expand out of bounds."""
    name = info.filename
    problem = None
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        problem = "has an absolute name"
    elif ".." in re.split(r"[/\\]", name):
        problem = "has a '..' component"
    elif "::" in name:
        problem = "contains '::' (the URL chain separator)"
    elif stat.S_ISLNK(info.external_attr >> 16):
        problem = "is a symbolic link"
    elif info.flag_bits & 0x1:
        problem = "is encrypted"
    elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        problem = f"uses compression method {info.compress_type}, where stored (0) or deflated (8) is expected"
    elif info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        problem = f"is stored but lists {info.compress_size:,} bytes stored for {info.file_size:,}"
    elif info.file_size > MAX_MEMBER_BYTES:
        problem = f"expands to {info.file_size:,} bytes, over the {MAX_MEMBER_BYTES:,}-byte bound"
    elif info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_COMPRESSION_RATIO * max(
        info.compress_size, 1
    ):
        problem = (
            f"has a compression ratio of {info.file_size / max(info.compress_size, 1):,.0f}, "
            f"over the bound of {MAX_COMPRESSION_RATIO}"
        )
    if problem:
        raise M2krDataError(f"{archive}: member {name!r} {problem}; refusing the archive.")


def member_data_offset(virtual: PartsFile, info: zipfile.ZipInfo, archive: str) -> int:
    """Where the member's data starts, after checking that its local header is where the zip directory says.

    One small read; parts swapped, replaced or corrupted put another header (or none) at that byte.
    """
    name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    header = virtual.pread(info.header_offset, _LOCAL_HEADER.size + len(name))
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(header[: _LOCAL_HEADER.size])
    if signature != b"PK\x03\x04" or name_length != len(name) or header[_LOCAL_HEADER.size :] != name:
        part = virtual.part_at(info.header_offset)
        raise M2krDataError(
            f"{archive}: member {info.filename!r} has no local header at byte {info.header_offset:,} (in {part}), "
            "where the zip directory puts it: the parts are out of order, or a part was replaced or corrupted."
        )
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def read_member(virtual: PartsFile, info: zipfile.ZipInfo, archive: str) -> bytes:
    """A member's bytes, inflated no further than its listed size and checked against its CRC-32.

    The headers are untrusted: zipfile inflates up to 2 GB in one call before comparing with the listed size, and
    a stored member read without its CRC turns a flipped byte into other pixels silently.
    """
    start = member_data_offset(virtual, info, archive)
    if info.compress_type == zipfile.ZIP_STORED:
        data = virtual.pread(start, info.file_size)
    else:
        data = _inflate(virtual, start, info, archive)
    crc = zlib.crc32(data)
    if crc != info.CRC:
        raise M2krDataError(
            f"{archive}: member {info.filename!r} has CRC-32 {crc:08x} where the zip directory lists "
            f"{info.CRC:08x}: its bytes were changed, or a part was replaced."
        )
    return data


def _inflate(virtual: PartsFile, start: int, info: zipfile.ZipInfo, archive: str) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    pieces, size, offset, end = [], 0, start, start + info.compress_size
    try:
        while not inflater.eof and offset < end:
            pending = virtual.pread(offset, min(_INFLATE_CHUNK, end - offset))
            offset += len(pending)
            while pending and not inflater.eof:
                # At most one byte past the listed size: enough to know the header lied, and no more.
                piece = inflater.decompress(pending, info.file_size - size + 1)
                size += len(piece)
                if size > info.file_size:
                    raise _member_error(info, archive, f"inflates past the {info.file_size:,} bytes its header lists")
                pieces.append(piece)
                pending = inflater.unconsumed_tail
    except zlib.error as err:
        raise _member_error(info, archive, f"has a corrupt deflate stream ({err})") from None
    if not inflater.eof or size != info.file_size:
        raise _member_error(info, archive, f"inflates to {size:,} bytes where its header lists {info.file_size:,}")
    used = offset - start - len(inflater.unused_data)
    if size > MAX_MEMBER_BYTES or size > MAX_COMPRESSION_RATIO * max(used, 1):
        raise _member_error(
            info,
            archive,
            f"inflates {used:,} bytes to {size:,}, beyond the bounds ({MAX_MEMBER_BYTES:,} bytes, "
            f"ratio {MAX_COMPRESSION_RATIO})",
        )
    return b"".join(pieces)


def _member_error(info: zipfile.ZipInfo, archive: str, problem: str) -> M2krDataError:
    return M2krDataError(f"{archive}: member {info.filename!r} {problem}; refusing to read it.")


def check_local_headers(virtual: PartsFile, archive: zipfile.ZipFile, members, label: str):
    """Check the local header of each referenced member: one small read each, no image data."""
    for member in members:
        member_data_offset(virtual, archive.getinfo(member), label)


class SplitZipFileSystem(AbstractArchiveFileSystem):
    """Members of a zip stored as byte-level parts, read in place: ``splitzip://<member>::<part>|<part>|...``.

    The target (after ``::``) lists the parts, on any fsspec filesystem, separated by ``|``. Unlike fsspec's
    ``zip://`` (not cachable, so it re-reads the central directory on every open), an instance is cached per
    process and thread, so the directory of a 47K-member archive is read once.
    """

    protocol = PROTOCOL
    root_marker = ""

    def __init__(self, fo="", target_protocol=None, target_options=None, **kwargs):
        super().__init__(**kwargs)
        if not fo:
            raise ValueError(f"{PROTOCOL}:// needs the archive parts: {PROTOCOL}://<member>::<part>|<part>|...")
        target = fsspec.filesystem(target_protocol or "file", **(target_options or {}))
        self.fo = fo
        self.parts = [target._strip_protocol(part) for part in fo.split("|")]
        self._virtual = open_parts(target, self.parts)
        try:
            self.zip = open_zip(self._virtual, self.parts)
        except Exception:
            self._virtual.close()
            raise
        self.dir_cache = None

    @classmethod
    def _strip_protocol(cls, path):
        return super()._strip_protocol(path).lstrip("/")

    def _get_dirs(self):
        if self.dir_cache is None:
            names = [info.filename.rstrip("/") for info in self.zip.infolist()]
            directories = self._all_dirnames(names)
            self.dir_cache = {name: {"name": name, "size": 0, "type": "directory"} for name in directories}
            for info in self.zip.infolist():
                name = info.filename.rstrip("/")
                kind = "directory" if info.is_dir() else "file"
                self.dir_cache[name] = {"name": name, "size": info.file_size, "type": kind}

    def _open(self, path, mode="rb", **kwargs):
        if mode != "rb":
            raise OSError(f"{PROTOCOL}:// is read-only")
        path = self._strip_protocol(path)
        try:
            info = self.zip.getinfo(path)
        except KeyError:
            raise FileNotFoundError(f"{path} is not a member of {self.parts[0]}") from None
        check_member(info, self.parts[0])
        # The whole member in memory (at most MAX_MEMBER_BYTES): datasets.Image reads it whole anyway, and the
        # CRC is then checked on every open.
        return io.BytesIO(read_member(self._virtual, info, self.parts[0]))


def archive_url(member: str, parts) -> str:
    """The reference to one archive member that ``datasets.Image`` decodes through fsspec."""
    return f"{PROTOCOL}://{member}::{'|'.join(parts)}"


# The latest definition wins: the module may be imported both installed and as a datasets script.
fsspec.register_implementation(PROTOCOL, SplitZipFileSystem, clobber=True)
