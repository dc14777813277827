"""What a user feels: ``mmrhub export mipr OUT --data-dir DIR`` as a whole process against the script a user would
write instead (``bench/peer_export_datasets.py``: ``load_dataset("json")``, an ``Image`` column, Parquet shards
with the images embedded as ``push_to_hub`` writes them), in one run.

    python bench/export_process.py [--data-dir DIR] [--photo-side 400] [--rounds 3]

Full-scale synthetic MIPR (``bench/make_mipr_synthetic.py``; 37,775 images, photo-like JPEGs of ``--photo-side``).
Each figure times a whole process, interpreter start, imports, reading the tables, the images and writing every
config included; the two sides alternate, median of the rounds; peak RSS is the child's maximum resident set.
Each process starts with an empty ``HF_HOME``, as a first export does: mmrhub's builder makes and caches its
tables, and ``load_dataset("json")`` its own. The image files are in the page cache for both sides. mmrhub
checks that every image decodes; the script copies the bytes.
Target: time ratio (mmrhub / script) at most 1.0.
"""

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from evaluate_process import USER_ENV
from evaluate_process import timed
from make_mipr_synthetic import make

HERE = Path(__file__).resolve().parent
PEER = HERE / "peer_export_datasets.py"


def rows_written(out: Path) -> dict:
    """Rows of each config's Parquet files in ``out``: both sides must write the same rows."""
    return {
        folder.name: sum(pq.ParquetFile(f).metadata.num_rows for f in folder.glob("*.parquet"))
        for folder in sorted(out.iterdir())
        if folder.is_dir()
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="a synthetic MIPR data dir (default: made under bench/out/)")
    parser.add_argument("--photo-side", type=int, default=400, help="side of each photo-like synthetic image")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(args.data_dir or HERE / "out" / f"mipr_synthetic_photo{args.photo_side}")
    if not (data_dir / "mipr_annotation.jsonl").exists():
        make(data_dir, photo_side=args.photo_side)
    images = sorted((data_dir / "images").rglob("*.jpg"))
    for image in images:
        image.read_bytes()  # warm the page cache for both sides
    work = Path(tempfile.mkdtemp(prefix="export-process-", dir=HERE / "out"))
    sides = {
        "mmrhub": lambda out: [
            str(Path(sys.executable).parent / "mmrhub"),
            "export",
            "mipr",
            str(out),
            "--data-dir",
            str(data_dir),
        ],
        "script": lambda out: [sys.executable, str(PEER), str(data_dir), str(out)],
    }
    results, written = {name: [] for name in sides}, {}
    try:
        for _ in range(args.rounds):
            for name, argv in sides.items():
                shutil.rmtree(work, ignore_errors=True)
                (work / "hf").mkdir(parents=True)
                results[name].append(timed(argv(work / "out"), {**USER_ENV, "HF_HOME": str(work / "hf")}))
                written[name] = rows_written(work / "out")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (ours, ours_rss), (peer, peer_rss) = (
        (statistics.median(t for t, _ in results[name]), max(m for _, m in results[name])) for name in sides
    )
    print(f"data: {data_dir}; medians of {args.rounds}, alternating, every process with an empty HF_HOME")
    if len(set(map(str, written.values()))) != 1:
        raise SystemExit(f"the two sides wrote different rows: {written}")
    print("rows written, each side: " + ", ".join(f"{config} {rows:,}" for config, rows in written["mmrhub"].items()))
    print("all seconds: " + ", ".join(f"{name} {' '.join(f'{t:.1f}' for t, _ in r)}" for name, r in results.items()))
    print(
        f"\n| whole process | mmrhub export mipr | datasets script | time ratio | peak RSS ratio |\n"
        f"|---|---:|---:|---:|---:|\n"
        f"| {data_dir.name}, {len(images):,} JPEGs | {ours:.1f} s, {ours_rss:.0f} MiB | "
        f"{peer:.1f} s, {peer_rss:.0f} MiB | **{ours / peer:.2f}** | **{ours_rss / peer_rss:.2f}** |"
    )


if __name__ == "__main__":
    main()
