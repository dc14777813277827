"""Random access to M2KR screenshots: the split archive read in place vs the same files extracted on disk.

Builds a synthetic screenshot zip (``--members`` PNGs of about ``--kb`` KB, stored, as in Web_Image.zip), splits it
at byte level into 3 parts, extracts it, then reads the same ``--reads`` random members in one process with:

- extracted:  the peer, plain files on disk (an ``Image`` reference to a local path);
- splitzip:   m2kr's reference ``splitzip://<member>::<part>|<part>|<part>``, the parts read in place;
- fsspec zip: ``zip://<member>::<unsplit zip>``, fsspec's own ZipFileSystem (not cachable: it re-reads the
  central directory on every open), on a joined copy; at most ``--zip-reads`` reads, it is slow.

Two measures: ``bytes`` (open and read the member, as ``datasets.Image`` does before decoding) and ``decode``
(``datasets.Image().decode_example`` plus ``load()``). Prints reads/s and the ratio to extracted; the target is
splitzip >= 0.5x extracted. The defaults use screenshots of the real average size (121 GB / 47,318 = 2.6 MB):

    python bench/m2kr_split_zip.py                                   # 400 x 2.6 MB, 1 GB
    python bench/m2kr_split_zip.py --members 10000 --kb 48 --reads 2000   # many small members
"""

import argparse
import random
import shutil
import statistics
import sys
import time
import zipfile
from pathlib import Path

import datasets
import numpy as np
from datasets.utils.file_utils import xopen

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from make_m2kr_synthetic import screenshot  # noqa: E402

import m2kr_archive  # noqa: E402  (registers splitzip://)

PARTS = ("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003")


def build(out: Path, members: int, kb: int, seed: int):
    """Write the split archive, its extracted copy and a joined (unsplit) copy; return the member names."""
    rng = np.random.default_rng(seed)
    payloads = [screenshot(rng, kb) for _ in range(64)]  # 64 distinct images, reused under many names
    names = [f"Web_Image/{index:07d}.png" for index in range(members)]
    joined = out / "Web_Image.zip"
    with zipfile.ZipFile(joined, "w", compression=zipfile.ZIP_STORED) as archive:
        for index, name in enumerate(names):
            archive.writestr(name, payloads[index % len(payloads)])
    size = -(-joined.stat().st_size // len(PARTS))
    with open(joined, "rb") as source:
        for part in PARTS:
            (out / part).write_bytes(source.read(size))
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(out / "extracted")
    return names


def timed(paths, measure) -> float:
    start = time.perf_counter()
    for path in paths:
        measure(path)
    return len(paths) / (time.perf_counter() - start)


def read_bytes(path):
    with xopen(path, "rb") as f:
        return f.read()


def decode(path):
    datasets.Image().decode_example({"path": path, "bytes": None}).load()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=400, help="screenshots in the archive")
    parser.add_argument("--kb", type=int, default=2_600, help="approximate size of one screenshot")
    parser.add_argument("--reads", type=int, default=300, help="random members read per peer and round")
    parser.add_argument("--zip-reads", type=int, default=30, help="reads for the slow fsspec zip:// peer")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the median is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "m2kr_split_zip")
    args = parser.parse_args(argv)

    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    names = build(args.out, args.members, args.kb, args.seed)
    sample = random.Random(args.seed).sample(names, min(args.reads, len(names)))
    parts = [str(args.out / part) for part in PARTS]
    peers = {
        "extracted": [str(args.out / "extracted" / name) for name in sample],
        "splitzip": [m2kr_archive.archive_url(name, parts) for name in sample],
        "fsspec zip": [f"zip://{name}::{args.out / 'Web_Image.zip'}" for name in sample[: args.zip_reads]],
    }
    for paths in peers.values():  # same bytes everywhere, and the first open (directory read) out of the timing
        assert read_bytes(paths[0]) == read_bytes(peers["extracted"][0])

    total_mb = sum((args.out / part).stat().st_size for part in PARTS) / 2**20
    print(
        f"archive: {args.members:,} members, {total_mb:,.0f} MB in {len(PARTS)} parts; "
        f"{len(sample):,} random reads per round, median of {args.rounds} rounds"
    )
    print(f"{'peer':<12} {'bytes/s':>10} {'ratio':>7} {'decode/s':>10} {'ratio':>7}")
    results = {}
    for peer, paths in peers.items():
        results[peer] = [
            statistics.median(timed(paths, measure) for _ in range(args.rounds)) for measure in (read_bytes, decode)
        ]
        (raw, decoded), (raw_peer, decoded_peer) = results[peer], results["extracted"]
        print(f"{peer:<12} {raw:>10,.0f} {raw / raw_peer:>6.2f}x {decoded:>10,.0f} {decoded / decoded_peer:>6.2f}x")
    ratio = min(a / b for a, b in zip(results["splitzip"], results["extracted"]))
    print(f"splitzip vs extracted: {ratio:.2f}x (target >= 0.5x): {'PASS' if ratio >= 0.5 else 'FAIL'}")
    return 0 if ratio >= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
