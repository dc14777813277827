"""M2KR's split archive read in place over loopback HTTP against the same parts read locally: requests, bytes, time.

Builds a synthetic screenshot zip (``--members`` stored members of about ``--kb`` KB, zip64 end records as the real
archives have), split at byte level into ``Web_Image.zip.001``-``.003``, serves it from
``tests/helpers/_range_server.py`` (a real HTTP server on 127.0.0.1 with Range support, counting requests and bytes
sent), and in one process reads the same ``--reads`` random members through ``splitzip://`` (what ``datasets.Image``
opens) with:

- local:        the parts on disk (the peer); reads and bytes counted by the reader;
- http:         the parts over HTTP, one range request per member (this reader);
- http cat:     the same members in one ``SplitZipFileSystem.cat`` call: neighbours coalesced;
- fsspec file:  the peer the builder used before (fsspec's HTTP file per part, its default 5 MiB read-ahead
                block), at most ``--peer-reads`` reads: it moves a block per member.

Also the directory: the requests and bytes of a cold open (nothing cached), and of a new process's open once
``$HF_HOME/mmrhub/zip-directories`` holds it. Times are one step in process (the member reads, with the archive
already open), median of ``--rounds``.

    python bench/remote_archive_reads.py                       # 3,000 x 100 KB members, 1,000 reads
    python bench/remote_archive_reads.py --members 1200 --kb 2600 --reads 1000   # screenshots of the real size
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import fsspec

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from _range_server import RangeServer  # noqa: E402
from _range_server import member_spans  # noqa: E402
from _range_server import split_zip  # noqa: E402

import m2kr_archive  # noqa: E402

PARTS = ("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003")


def members(count: int, kb: int, seed: int) -> list:
    rng = random.Random(seed)
    payloads = [rng.randbytes(kb * 1024) for _ in range(16)]
    return [(f"Web_Image/{index:07d}.png", payloads[index % 16] + index.to_bytes(4, "big")) for index in range(count)]


def fresh_process():
    """What a new process starts with: no directory parsed, no part's state remembered."""
    m2kr_archive._ARCHIVES.clear()
    m2kr_archive._STATES.clear()


def timed_reads(fs, names) -> tuple:
    start = time.perf_counter()
    total = 0
    for name in names:
        with fs.open(name) as member:
            total += len(member.read())
    return time.perf_counter() - start, total


def peer_reads(server, names, spans) -> tuple:
    """The reader as it was: fsspec's HTTP file per part, default block size and read-ahead cache."""
    http = fsspec.filesystem("http")
    sizes = [(server.root / part).stat().st_size for part in PARTS]
    files = [http.open(server.file_url(part), "rb") for part in PARTS]
    start = time.perf_counter()
    for name in names:
        begin, end = spans[name]
        index = 0
        while begin >= sizes[index]:
            begin, end, index = begin - sizes[index], end - sizes[index], index + 1
        files[index].seek(begin)
        files[index].read(min(end, sizes[index]) - begin)
    elapsed = time.perf_counter() - start
    for file in files:
        file.close()
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=3000, help="members in the archive")
    parser.add_argument("--kb", type=int, default=100, help="approximate size of one member")
    parser.add_argument("--reads", type=int, default=1000, help="random members read")
    parser.add_argument("--peer-reads", type=int, default=100, help="reads for the fsspec-file peer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        os.environ["HF_HOME"] = str(work / "hf")
        contents = members(args.members, args.kb, args.seed)
        split_zip(work, contents, PARTS)
        spans = member_spans(contents)
        total_size = sum((work / part).stat().st_size for part in PARTS)
        directory = total_size - max(end for _, end in spans.values())
        names = random.Random(args.seed).sample([name for name, _ in contents], args.reads)
        member_bytes = sum(spans[name][1] - spans[name][0] for name in names)
        print(
            f"archive: {args.members:,} members of ~{args.kb} KB, {total_size / 2**20:,.1f} MiB in 3 parts; "
            f"directory {directory:,} bytes; {args.reads:,} random reads, {member_bytes / 2**20:,.1f} MiB of spans"
        )
        with RangeServer(work) as server:
            http_fo = "|".join(server.file_url(part) for part in PARTS)
            local_fo = "|".join(str(work / part) for part in PARTS)

            # The directory, cold then as a new process finds it.
            fresh_process()
            server.reset()
            http_fs = m2kr_archive.SplitZipFileSystem(fo=http_fo, target_protocol="http", skip_instance_cache=True)
            cold = (len(server.requests), len(server.gets()), server.sent())
            fresh_process()
            server.reset()
            m2kr_archive.SplitZipFileSystem(fo=http_fo, target_protocol="http", skip_instance_cache=True)
            warm = (len(server.requests), len(server.gets()), server.sent())
            print(
                f"directory, cold open: {cold[0]} requests ({cold[1]} GET), {cold[2]:,} bytes; "
                f"new process with the cache: {warm[0]} requests ({warm[1]} GET), {warm[2]:,} bytes"
            )

            local_fs = m2kr_archive.SplitZipFileSystem(fo=local_fo, skip_instance_cache=True)
            local_times, http_times, cat_times = [], [], []
            for _ in range(args.rounds):
                for reader in local_fs._virtual.readers:
                    reader.reads = reader.bytes_read = 0
                elapsed, got = timed_reads(local_fs, names)
                local_times.append(elapsed)
                local_reads = sum(reader.reads for reader in local_fs._virtual.readers)
                local_bytes = sum(reader.bytes_read for reader in local_fs._virtual.readers)
                server.reset()
                elapsed, got_http = timed_reads(http_fs, names)
                http_times.append(elapsed)
                http_requests, http_bytes = len(server.requests), server.sent()
                assert got_http == got
                server.reset()
                start = time.perf_counter()
                http_fs.cat(list(names))
                cat_times.append(time.perf_counter() - start)
                cat_requests, cat_bytes = len(server.requests), server.sent()
            server.reset()
            peer_names = names[: args.peer_reads]
            peer_time = peer_reads(server, peer_names, spans)
            peer_requests, peer_bytes = len(server.requests), server.sent()
            peer_member_bytes = sum(spans[name][1] - spans[name][0] for name in peer_names)

        local, http, cat = (statistics.median(times) for times in (local_times, http_times, cat_times))
        rows = [
            ("local (peer)", local_reads, local_bytes, member_bytes, local, 1.0),
            ("http, one range per member", http_requests, http_bytes, member_bytes, http, http / local),
            ("http, cat (coalesced)", cat_requests, cat_bytes, member_bytes, cat, cat / local),
        ]
        print(f"\n{'reader':<34} {'requests':>9} {'bytes moved':>14} {'x spans':>8} {'ms/read':>8} {'time/local':>11}")
        for label, requests, moved, spans_bytes, seconds, ratio in rows:
            print(
                f"{label:<34} {requests:>9,} {moved:>14,} {moved / spans_bytes:>8.3f} "
                f"{1000 * seconds / len(names):>8.3f} {ratio:>11.2f}"
            )
        print(
            f"{'fsspec HTTP file (before), ' + str(len(peer_names)):<34} {peer_requests:>9,} {peer_bytes:>14,} "
            f"{peer_bytes / peer_member_bytes:>8.3f} {1000 * peer_time / len(peer_names):>8.3f} "
            f"{'':>11}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
