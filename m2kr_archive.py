"""M2KR's split zip archives read in place, as the fsspec protocol ``splitzip``.

``splitzip://<member>::<part>|<part>|...`` opens one member of a zip stored as byte-level parts (``split -b``),
on any fsspec filesystem, without extracting or joining them. Members are untrusted: names, links, encryption,
compression method, size and ratio are checked, and every read is bounded and checked against its CRC-32.

Each member is read with one exact read of its local header and data: one range request for remote parts
(``http(s)://``, ``hf://``, through ``mmr_remote``), whose zip directory is read once per process and kept in
``$HF_HOME/mmrhub/zip-directories/``, keyed on each part's size and version. Many members (``cat`` of a list,
``read_members``) are read at once, in archive order, with many requests in flight (``plan_reads``).

Needs only fsspec, so a DataLoader worker started with "spawn" resolves the protocol through the package's
``fsspec.specs`` entry point without importing ``datasets``. ``m2kr.py`` imports it (and, as a datasets loading
script, has it copied beside itself).
"""

import bisect
import contextlib
import io
import os
import re
import shutil
import stat
import struct
import zipfile
import zlib
from pathlib import Path

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
if __package__: \
from .mmr_remote import (RangeReader, RemoteChanged, download, is_http, is_local, read_ranges, requests_in_flight,
                         state_of)
else:
    from mmr_remote import (RangeReader, RemoteChanged, download, is_http, is_local, read_ranges, requests_in_flight,
                            state_of)
if __package__: \
from .mmr_cache import aside, cache_root, key_of, move_into_place, read_entry, sign
else:
    from mmr_cache import aside, cache_root, key_of, move_into_place, read_entry, sign
# fmt: on

# Bounds on an archive member (members are untrusted); the real screenshots average 2.6 MB.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_COMPRESSION_RATIO = 100

PROTOCOL = "splitzip"
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version .. sizes), name length, extra length
_END_SIGNATURE = b"PK\x05\x06"
_END_SIZE = 22  # the end record without its comment, which is at most 65,535 bytes
_INFLATE_CHUNK = 1 << 20
_MAX_STORED = MAX_MEMBER_BYTES + (1 << 20)  # the most data a member within the bounds can store (deflate adds a little)
# Neighbouring members are read together when the bytes between them cost less than a request (read_members).
COALESCE_GAP = 1 << 16
COALESCE_WASTE = 0.2
COALESCE_MAX = 64 << 20


class PartsFile(io.RawIOBase):
    """Read-only seekable view of byte-level parts (``split -b``) as one file, on any fsspec file system.

    Each part is a ``RangeReader``: ``pread`` asks each part it spans for exactly its bytes (one request per part
    over HTTP or the Hub). ``hold`` keeps the archive's tail (its zip directory) in memory, so that parsing it
    reads nothing more.
    """

    def __init__(self, readers):
        super().__init__()
        self.readers = readers
        self.sizes = [reader.size for reader in readers]
        self._names = [reader.name for reader in readers]
        self._size, self._pos = sum(self.sizes), 0
        self._starts = [sum(self.sizes[:index]) for index in range(len(self.sizes))]
        self.held_start, self.held = self._size, b""

    @property
    def local(self) -> bool:
        """Whether the parts are local files."""
        return is_local(self.readers[0].fs)

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
        view[:wanted] = self.pread(self._pos, wanted)
        self._pos += wanted
        return wanted

    def hold(self, start: int, data: bytes):
        """Keep bytes ``start`` to the end in memory (the zip directory and end records)."""
        self.held_start, self.held = start, data

    def pread(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset``: one read per part they span (one for nearly every member)."""
        return self.pread_many([(offset, size)])[0]

    def pread_many(self, ranges) -> list:
        """The bytes of each ``(offset, size)`` of ``ranges``: every read at once (``mmr_remote.read_ranges``: many
        requests in flight remotely), one per part a range spans."""
        plans, jobs = [], []
        for offset, size in ranges:
            size = max(0, min(size, self._size - offset))
            plan, end = [], offset + size
            position = offset
            while position < min(end, self.held_start):
                index = bisect.bisect_right(self._starts, position) - 1
                start, part_size = self._starts[index], self.sizes[index]
                count = min(end, self.held_start, start + part_size) - position
                plan.append(len(jobs))
                jobs.append((self.readers[index], position - start, position - start + count))
                position += count
            if end > self.held_start:
                plan.append(self.held[max(offset, self.held_start) - self.held_start : end - self.held_start])
            plans.append(plan)
        found = read_ranges(jobs)
        for job, data in zip(jobs, found):
            if len(data) != job[2] - job[1]:
                part = self.readers.index(job[0])
                raise M2krDataError(f"{self._names[part]}: ends before its listed size of {self.sizes[part]:,} bytes.")
        pieces = [[found[piece] if isinstance(piece, int) else piece for piece in plan] for plan in plans]
        return [plan[0] if len(plan) == 1 else b"".join(plan) for plan in pieces]

    def part_at(self, offset: int) -> str:
        """The name of the part holding byte ``offset``."""
        return self._names[max(0, bisect.bisect_right(self._starts, offset) - 1)]

    def state(self) -> list:
        """Each part's name, size and version (what the directory cache is keyed on)."""
        return [[reader.name, reader.size, reader.version] for reader in self.readers]

    def close(self):
        """Close every part."""
        for reader in self.readers:
            reader.close()
        super().close()


# What a remote part's reader says when its server has no Range support.
_DOWNLOAD_ADVICE = (
    " Serve the archives from a server with Range support (the Hub has it), or pass download_archives=True "
    "(m2kr.load) to download the parts whole."
)


def open_parts(fs, parts, names=None, fresh: bool = True) -> PartsFile:
    """The parts on ``fs``, in order, as one file (``names``: the parts as messages call them, e.g. URLs); a
    missing part is named. Nothing is read: a remote part's size and version come from one HEAD (``fs.info``), or
    with ``fresh=False`` from the last one this process made (each read then checks the version it is sent)."""
    names = list(names or parts)
    readers = []
    for part, name in zip(parts, names):
        try:
            if is_local(fs):
                size, version = fs.size(part), local_version(part)
            elif not fresh and name in _STATES:
                size, version = _STATES[name]
            else:
                size, version = _STATES[name] = state_of(fs, part, name)
        except FileNotFoundError:
            if is_local(fs):
                raise FileNotFoundError(f"Archive part {name} is missing.") from None
            answer = " (the server answered 404 Not Found)" if is_http(fs) else ""
            raise FileNotFoundError(
                f"Archive part {name} is missing{answer}: check images_dir= (--images-dir), the folder holding "
                "the parts."
            ) from None
        opener = _open_local if is_local(fs) else None
        readers.append(RangeReader(fs, part, name, size, version, advice=_DOWNLOAD_ADVICE, opener=opener))
    return PartsFile(readers)


def local_version(part: str) -> str:
    """A local part's version: its size, modification and change times and inode (what the builders' cache key
    reads of an archive too)."""
    status = os.stat(part)
    return f"{status.st_size}-{status.st_mtime_ns}-{status.st_ctime_ns}-{status.st_ino}"


def _open_local(part: str):
    """A local part through ``mmr_inputs`` (a FIFO or device is refused, not waited on)."""
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
        order = _multi_disk(virtual, parts, label) or _order_problem(virtual, parts)
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
        order = _multi_disk(virtual, parts, label) or _order_problem(virtual, parts)
        raise M2krDataError(order or f"{_suspect_part(parts, sizes)}: {abs(first):,} bytes missing or extra.")
    if not archive.infolist() and archive.start_dir:
        # zipfile takes the last end record it finds, so one hidden in the real one's comment hides every member.
        raise M2krDataError(
            f"{label}: the zip end record read lists no members, yet {archive.start_dir:,} bytes precede it: it is "
            "not the archive's own (a fake one in the archive comment?) or the archive is corrupt; refusing it."
        )
    for info in archive.infolist():
        check_member(info, label)
        if info.header_offset + _LOCAL_HEADER.size > archive.start_dir:
            raise M2krDataError(
                f"{label}: member {info.filename!r}: the zip directory puts its local header at byte "
                f"{info.header_offset:,}, past the end of the members (the directory starts at byte "
                f"{archive.start_dir:,}): the directory is corrupt; refusing the archive."
            )
    return archive


def _multi_disk(virtual: PartsFile, parts, label: str):
    """What to do with a multi-disk zip (``zip -s``: ``.z01``, ``.z02``, ... ``.zip``) read as byte-level parts,
    if its end record says it is one; else None."""
    tail = _tail(virtual, sum(virtual.sizes))
    ends = _end_records(tail)
    if not ends:
        return None
    disk, directory_disk = struct.unpack_from("<HH", tail, ends[0] + 4)
    if disk in (0, 0xFFFF) and directory_disk in (0, 0xFFFF):
        return None
    name = parts[-1].rsplit("/", 1)[-1]
    split = (
        f"split it at byte level (split -n {len(parts)} -a 3 --numeric-suffixes=1 whole.zip {name[:-3]})"
        if len(parts) > 1
        else f"use whole.zip as {name}"
    )
    return (
        f"{label}: a multi-disk zip archive (made by zip -s; its end record names disk {disk + 1}), where "
        f"{'byte-level parts of one zip are' if len(parts) > 1 else 'one zip is'} expected. Join its disks with "
        "Info-ZIP's zip -s 0 (name them out.z01, out.z02, ... and the last one out.zip, then: zip -s 0 out.zip "
        f"--out whole.zip), then {split}."
    )


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


def _encoded_name(info: zipfile.ZipInfo) -> bytes:
    return info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")


def _data_start(span: bytes, info: zipfile.ZipInfo, virtual: PartsFile, archive: str) -> int:
    """Where the data starts in ``span`` (which starts at the member's local header), after checking the header."""
    name = _encoded_name(info)
    if len(span) < _LOCAL_HEADER.size:
        raise M2krDataError(
            f"{archive}: member {info.filename!r}: the zip directory puts its local header at byte "
            f"{info.header_offset:,}, {'past' if not span else 'too near'} the end of the archive's members "
            f"({virtual.part_at(info.header_offset)}): the directory is corrupt, or a part was cut short or replaced."
        )
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(span[: _LOCAL_HEADER.size])
    if (
        signature != b"PK\x03\x04"
        or name_length != len(name)
        or span[_LOCAL_HEADER.size : _LOCAL_HEADER.size + len(name)] != name
    ):
        part = virtual.part_at(info.header_offset)
        raise M2krDataError(
            f"{archive}: member {info.filename!r} has no local header at byte {info.header_offset:,} (in {part}), "
            "where the zip directory puts it: the parts are out of order, or a part was replaced or corrupted."
        )
    return _LOCAL_HEADER.size + name_length + extra_length


def member_span(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple:
    """``(start, end)`` of the bytes that hold the member: its local header and data (and any data descriptor),
    up to the next member's header, so that one exact read holds the whole member."""
    ends = getattr(archive, "_m2kr_span_ends", None)
    if ends is None:
        offsets = sorted({item.header_offset for item in archive.infolist()})
        ends = dict(zip(offsets, offsets[1:] + [archive.start_dir]))
        archive._m2kr_span_ends = ends
    # At most the largest local header, the listed data and a descriptor: a gap after the member is not read.
    bound = _LOCAL_HEADER.size + len(_encoded_name(info)) + 0xFFFF + min(info.compress_size, _MAX_STORED) + 24
    return info.header_offset, max(info.header_offset, min(ends[info.header_offset], info.header_offset + bound))


def read_member(virtual: PartsFile, archive: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> bytes:
    """A member's bytes with one read of its span (one range request remotely), checked as ``member_bytes``."""
    start, end = member_span(archive, info)
    return member_bytes(virtual, info, virtual.pread(start, end - start), label)


def read_members(
    virtual: PartsFile, archive: zipfile.ZipFile, infos, label: str, gap: int = None, on_error: str = "raise"
) -> dict:
    """``{name: bytes}`` of many members, read at once in archive order (``plan_reads``: neighbours joined, the
    pieces read with many requests in flight) and each checked as ``member_bytes``. ``on_error="return"``: a member
    that fails its checks gets its error in its place (a failed request still raises)."""
    unique = {info.filename: info for info in infos}.values()
    spans = sorted(((member_span(archive, info), info) for info in unique), key=lambda pair: pair[0])
    pieces = plan_reads([span for span, _ in spans], gap)
    contents = virtual.pread_many([(start, end - start) for start, end, _ in pieces])
    found = {}
    for (start, _, members), data in zip(pieces, contents):
        for (span_start, span_end), info in (spans[index] for index in members):
            try:
                found[info.filename] = member_bytes(virtual, info, data[span_start - start : span_end - start], label)
            except M2krDataError as err:
                if on_error != "return":
                    raise
                found[info.filename] = err
    return found


def plan_reads(spans, gap: int = None) -> list:
    """``[(start, end, [span indices])]``: the reads of ``spans`` (sorted ``(start, end)``). A span joins the read
    before it when the gap between them is at most ``gap`` bytes (``COALESCE_GAP``, less than a request costs),
    the read's gaps stay within ``COALESCE_WASTE`` of its spans' bytes, and the read stays within its share of the
    whole (so that at least ``requests_in_flight`` reads are open at once where there are that many spans) and
    ``COALESCE_MAX``."""
    gap = COALESCE_GAP if gap is None else gap
    if not spans:
        return []
    total = sum(end - start for start, end in spans)
    # a read's share of the whole, its allowed gaps included
    share = min(COALESCE_MAX, max((1 + COALESCE_WASTE) * total / requests_in_flight(total / len(spans)), 1))
    reads, index = [], 0
    while index < len(spans):
        (start, end), last = spans[index], index
        wanted = end - start
        while last + 1 < len(spans):
            next_start, next_end = spans[last + 1]
            joined = max(end, next_end) - start
            if (
                next_start - end > gap
                or joined > share
                or joined - wanted - (next_end - next_start) > COALESCE_WASTE * (wanted + next_end - next_start)
            ):
                break
            end, last, wanted = max(end, next_end), last + 1, wanted + next_end - next_start
        reads.append((start, end, list(range(index, last + 1))))
        index = last + 1
    return reads


def member_bytes(virtual: PartsFile, info: zipfile.ZipInfo, span: bytes, archive: str) -> bytes:
    """The member's bytes from its span, inflated no further than its listed size and checked against its CRC-32.

    The headers are untrusted: zipfile inflates up to 2 GB in one call before comparing with the listed size, and
    a stored member read without its CRC turns a flipped byte into other pixels silently.
    """
    start = _data_start(span, info, virtual, archive)
    if start + info.compress_size > len(span):
        raise _member_error(
            info, archive, f"lists {info.compress_size:,} bytes of data, which run past the next member's header"
        )
    stored = memoryview(span)[start : start + info.compress_size]
    data = bytes(stored) if info.compress_type == zipfile.ZIP_STORED else _inflate(stored, info, archive)
    crc = zlib.crc32(data)
    if crc != info.CRC:
        raise M2krDataError(
            f"{archive}: member {info.filename!r} has CRC-32 {crc:08x} where the zip directory lists "
            f"{info.CRC:08x}: its bytes were changed, or a part was replaced."
        )
    return data


def _inflate(stored: memoryview, info: zipfile.ZipInfo, archive: str) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    pieces, size, offset = [], 0, 0
    try:
        while not inflater.eof and offset < len(stored):
            pending = stored[offset : offset + _INFLATE_CHUNK]
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
    used = offset - len(inflater.unused_data)
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
    """Check the local header of each referenced member: one small read each (read together, as
    ``PartsFile.pread_many`` reads), no image data."""
    infos = sorted((archive.getinfo(member) for member in members), key=lambda info: info.header_offset)
    headers = virtual.pread_many([(i.header_offset, _LOCAL_HEADER.size + len(_encoded_name(i))) for i in infos])
    for info, header in zip(infos, headers):
        _data_start(header, info, virtual, label)


# --- the zip directory of remote parts: read once per process, kept in $HF_HOME/mmrhub/zip-directories/ ---------

_DIRECTORY_FORMAT = "m2kr split-zip directory 1"  # bump when what an entry holds changes
_DIRECTORY_FILE = "directory.bin"
_MEMBER_KEY = "m2kr split-zip member 1"  # bump when what ukey holds changes
_END_PROBE = 1 << 12  # the first read from the end: the end records (zip64 ones too) and a short comment
_ARCHIVES = {}  # this process's parsed directories, by key
_STATES = {}  # this process's last (size, version) of each remote part, by name


def directory_folder(key: str) -> Path:
    """The cache entry of a directory."""
    return cache_root("zip-directories") / key


def open_archive(virtual: PartsFile, names) -> zipfile.ZipFile:
    """The zip directory of the parts, checked (``open_zip``). Local parts are read each time; remote ones once
    per process, and then from ``$HF_HOME/mmrhub/zip-directories/`` while every part keeps its size and version
    (the server's ETag, the Hub's blob id): a reopened archive then costs one HEAD per part and no GET."""
    if virtual.local:
        return open_zip(virtual, names)
    state = virtual.state()
    key = key_of(_DIRECTORY_FORMAT, state)
    archive = _ARCHIVES.get(key)
    if archive is not None:
        return archive
    versioned = all(version is not None for _, _, version in state)
    held = _cached_directory(key) if versioned else None
    virtual.hold(*(held or _read_directory(virtual)))
    archive = open_zip(virtual, names)
    archive.fp = None  # parsed: members are read through each file system's own PartsFile
    if versioned and held is None:
        _store_directory(key, virtual.held_start, virtual.held)
    _ARCHIVES[key] = archive
    return archive


def forget_directory(virtual: PartsFile):
    """Drop the parts' directory from this process and from the cache (a part changed on its server)."""
    key = key_of(_DIRECTORY_FORMAT, virtual.state())
    _ARCHIVES.pop(key, None)
    for name, _, _ in virtual.state():
        _STATES.pop(name, None)
    shutil.rmtree(directory_folder(key), ignore_errors=True)


def _read_directory(virtual: PartsFile) -> tuple:
    """``(start, bytes)``: the archive from its zip directory to its end, in one or two reads (one per part)."""
    total = sum(virtual.sizes)
    first = min(total, _END_PROBE)
    tail = virtual.pread(total - first, first)
    ends = _end_records(tail)
    if not ends and first < total:  # an archive comment longer than the probe: read up to the longest one
        more = min(total, _END_PROBE + _END_SIZE + 0xFFFF)
        tail = virtual.pread(total - more, more - first) + tail
        first, ends = more, _end_records(tail)
    if not ends:
        return total - first, tail  # zipfile says what is wrong, reading what it needs
    at = ends[0]  # the last one, as zipfile takes it
    size, offset = struct.unpack_from("<LL", tail, at + 12)
    locator = at - 20
    if locator >= 0 and tail[locator : locator + 4] == b"PK\x06\x07":
        record = struct.unpack_from("<Q", tail, locator + 8)[0] - (total - first)
        if 0 <= record <= len(tail) - 56 and tail[record : record + 4] == b"PK\x06\x06":
            size, offset = struct.unpack_from("<QQ", tail, record + 40)
    # Only what zipfile would read anyway: the listed directory, when it lies before what was read.
    if offset < total - first and total - first - offset <= size:
        return offset, virtual.pread(offset, total - first - offset) + tail
    return total - first, tail


def _cached_directory(key: str):
    folder = directory_folder(key)
    entry = read_entry(folder, key)
    if entry is None:
        return None
    try:
        return entry[0]["start"], (folder / _DIRECTORY_FILE).read_bytes()
    except (OSError, KeyError, TypeError):
        return None


def _store_directory(key: str, start: int, data: bytes):
    """Write the entry aside, sign it, and move it into place; a cache that cannot be written is skipped."""
    folder = directory_folder(key)
    work = aside(folder, "partial")
    try:
        work.mkdir(parents=True)
        (work / _DIRECTORY_FILE).write_bytes(data)
        sign(work, key, {"start": start})
        # in place of an entry of this key that failed its check, or of a twin written meanwhile
        move_into_place(work, folder, replace=True)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)  # read-only or full HF_HOME: the directory is read again next time


# --- remote parts downloaded whole (download_archives=True), kept in $HF_HOME/mmrhub/archives/ -------------------

_DOWNLOAD_FORMAT = "m2kr archive download 1"


def download_parts(fs, parts, names) -> list:
    """Local copies of the remote parts, downloaded whole into one entry of ``$HF_HOME/mmrhub/archives/`` keyed on
    every part's URL, size and version (one HEAD each), or that entry as an earlier call left it. A part is renamed
    into the entry only once every byte of it came and its ETag held; the entry is signed once all are there, so a
    cut or changed download is never reused."""
    states = [list(state_of(fs, part, name)) for part, name in zip(parts, names)]
    key = key_of(_DOWNLOAD_FORMAT, [[name, *state] for name, state in zip(names, states)])
    folder = cache_root("archives") / key
    local = [folder / name.rsplit("/", 1)[-1] for name in names]
    if read_entry(folder, key, check_bytes=False) is not None:
        return [str(path) for path in local]
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        (folder / "entry.json").unlink()  # an entry that no longer vouches for its parts: signed again at the end
    for part, name, (size, version), path in zip(parts, names, states, local):
        if not (path.is_file() and path.stat().st_size == size):
            download(fs, part, name, size, version, path)
    sign(folder, key, {"parts": names})
    return [str(path) for path in local]


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
        self.target = fsspec.filesystem(target_protocol or "file", **(target_options or {}))
        self.fo = fo
        self.parts = [self.target._strip_protocol(part) for part in fo.split("|")]
        # As the builder names them (hf://..., http://...): fsspec's URL chain may have stripped the protocol.
        self.names = self.parts if is_local(self.target) else [self.target.unstrip_protocol(p) for p in self.parts]
        self.label = self.names[0]
        self._open_directory()

    def _open_directory(self):
        # Sizes and versions as this process last saw them: no HEAD per worker thread (each read checks the ETag).
        self._virtual = open_parts(self.target, self.parts, self.names, fresh=False)
        try:
            self.zip = open_archive(self._virtual, self.names)
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

    def _info_of(self, path) -> zipfile.ZipInfo:
        path = self._strip_protocol(path)
        try:
            info = self.zip.getinfo(path)
        except KeyError:
            raise FileNotFoundError(f"{path} is not a member of {self.label}") from None
        check_member(info, self.label)
        return info

    def _open(self, path, mode="rb", **kwargs):
        if mode != "rb":
            raise OSError(f"{PROTOCOL}:// is read-only")
        # The whole member in memory (at most MAX_MEMBER_BYTES), read with one request: datasets.Image reads it
        # whole anyway, and the CRC is then checked on every open.
        info = self._info_of(path)
        return io.BytesIO(self._reading(lambda: read_member(self._virtual, self.zip, info, self.label)))

    def cat(self, path, recursive=False, on_error="raise", **kwargs):
        """Members' bytes; for a list of members, read at once in archive order (``read_members``: neighbours
        joined, many requests in flight), returned as ``{member: bytes}`` in the order given."""
        if not isinstance(path, list) or recursive:
            return super().cat(path, recursive=recursive, on_error=on_error, **kwargs)
        infos, found = {}, {}
        for member in path:
            try:
                infos[member] = self._info_of(member)
            except FileNotFoundError as err:
                if on_error == "raise":
                    raise
                found[member] = err
        read = self._reading(
            lambda: read_members(self._virtual, self.zip, infos.values(), self.label, on_error=on_error)
        )
        found.update((member, read[info.filename]) for member, info in infos.items())
        if on_error == "omit":
            return {member: found[member] for member in path if not isinstance(found[member], Exception)}
        return {member: found[member] for member in path}

    def ukey(self, path) -> str:
        """What identifies a member's bytes without reading them: its name, CRC-32 and size in the zip directory, and
        each part's name, size and version (the server's ETag, the Hub's blob id; a local part's size, times and
        inode). The key of its thumbnails and other caches."""
        if self._virtual.local and any(
            local_version(part) != version for part, (_, _, version) in zip(self.parts, self._virtual.state())
        ):
            self._open_directory()  # a local part rewritten since: its directory read again
        info = self._info_of(path)
        return key_of(_MEMBER_KEY, info.filename, info.CRC, info.file_size, self._virtual.state())

    def _reading(self, read):
        try:
            return read()
        except RemoteChanged:
            # The directory no longer describes the part: forget it and this instance, so the next load reads it anew.
            forget_directory(self._virtual)
            type(self)._cache.pop(self._fs_token, None)
            raise


def archive_url(member: str, parts) -> str:
    """The reference to one archive member that ``datasets.Image`` decodes through fsspec."""
    return f"{PROTOCOL}://{member}::{'|'.join(parts)}"


# The latest definition wins: the module may be imported both installed and as a datasets script.
fsspec.register_implementation(PROTOCOL, SplitZipFileSystem, clobber=True)
