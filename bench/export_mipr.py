"""Export time of full-scale synthetic MIPR (photo-like images) against ``datasets``' own Parquet path, in one run.

Both sides start from the same prepared builder Datasets (queries, corpus, qrels) and write every config as
Parquet shards with the images embedded. The peer is what ``Dataset.push_to_hub`` does per shard, minus the
upload: ``shard.map(embed_table_storage, batched=True, keep_in_memory=True)`` then ``shard.to_parquet``, with
its own shard count and row-group size. Ours is ``mmrhub.export.parquet.write_split``. The image files are read
once before timing so both sides start from a warm page cache; the sides alternate ``--repeats`` times, median
kept. One step in process: the builders' preparation is outside the timing. Ours opens every image with Pillow
and decodes it, except a JPEG whose markers show it decodes (``mmrhub/export/jpeg_markers.py``; other JPEGs at
an eighth of their size), on a thread a core; the peer reads the bytes only.
Target: speed ratio (peer seconds / our seconds) >= 1.0.

    python bench/export_mipr.py [--data-dir DIR] [--photo-side 400 | --image-bytes 30000] [--repeats 3]

``--photo-side``: photo-like JPEGs of that side (400: about 33 KB, as many pixels per byte as a product photo;
MIPR's own are 800x800); ``--image-bytes``: noise JPEGs grown to that size instead (183x183 at 30,000 bytes,
nearly all entropy-coded data, the slowest kind to decode per byte).
"""

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import datasets
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_mipr_synthetic import make  # noqa: E402
from peer_export_datasets import push_to_hub_shards  # noqa: E402

import mipr  # noqa: E402
from mmrhub.export.parquet import RowSource  # noqa: E402
from mmrhub.export.parquet import write_split  # noqa: E402


def peer_write(dataset: datasets.Dataset, out: Path, config: str):
    """``Dataset._push_parquet_shards_to_hub``'s shard loop, writing the shards locally."""
    push_to_hub_shards(dataset, out / config)


def ours_write(dataset: datasets.Dataset, out: Path, config: str, data_dir: Path):
    """What ``mmrhub export`` runs per config, its checks of every image file (signature, inside the data folder)
    included."""
    write_split(dataset, out, config, "test", source=RowSource(config, str(data_dir)))


def timed(write, tables: dict, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.perf_counter()
    for config, dataset in tables.items():
        write(dataset, out, config)
    return time.perf_counter() - start


def summary(out: Path) -> str:
    files = sorted(out.rglob("*.parquet"))
    groups = [pq.ParquetFile(f).metadata for f in files]
    rows = sum(m.num_rows for m in groups)
    return (
        f"{len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:,.0f} MB, {rows:,} rows, "
        f"largest file {max(f.stat().st_size for f in files) / 1e6:,.0f} MB, "
        f"{sum(m.num_row_groups for m in groups)} row groups"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help="a synthetic MIPR data dir (default: made under bench/out/)")
    parser.add_argument("--photo-side", type=int, default=400, help="side of each photo-like synthetic image")
    parser.add_argument("--image-bytes", type=int, default=0, help="noise images of this size instead")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    datasets.disable_progress_bars()
    side = 0 if args.image_bytes else args.photo_side
    kind = f"{args.image_bytes:,}-byte noise images" if args.image_bytes else f"{side}x{side} photo-like images"
    name = f"mipr_synthetic_{args.image_bytes}" if args.image_bytes else f"mipr_synthetic_photo{side}"
    data_dir = Path(args.data_dir or ROOT / "bench" / "out" / name)
    if not (data_dir / "mipr_annotation.jsonl").exists():
        make(data_dir, image_bytes=args.image_bytes, photo_side=side)
    work = Path(tempfile.mkdtemp(prefix="export-bench-", dir=ROOT / "bench" / "out"))
    try:
        tables = {c: mipr.load(c, data_dir=str(data_dir), cache_dir=str(work / "cache")) for c in mipr.CONFIG_NAMES}
        for image in (data_dir / "images").rglob("*.jpg"):
            image.read_bytes()  # warm the page cache for both sides
        results = {"datasets": [], "mmrhub": []}
        for _ in range(args.repeats):
            results["datasets"].append(timed(peer_write, tables, work / "peer"))
            results["mmrhub"].append(timed(partial(ours_write, data_dir=data_dir), tables, work / "ours"))
        peer, ours = statistics.median(results["datasets"]), statistics.median(results["mmrhub"])
        print(f"data: {data_dir} ({kind}); medians of {args.repeats}, alternating")
        print("all seconds: " + ", ".join(f"{side} {' '.join(f'{t:.1f}' for t in ts)}" for side, ts in results.items()))
        print(f"datasets (map embed_table_storage + to_parquet): {peer:7.1f} s  {summary(work / 'peer')}")
        print(f"mmrhub.export.parquet.write_split (checked):    {ours:7.1f} s  {summary(work / 'ours')}")
        print(f"speed ratio (datasets / mmrhub): {peer / ours:.2f}x  (target >= 1.0)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
