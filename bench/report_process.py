"""Time a whole ``mmrhub report mipr A B -o page.html`` process on full-scale synthetic MIPR with real-size images.

The tables come from ``make_mipr_synthetic.py`` (3,522 queries, 30,731 products); the gallery's 50 queries
(``--query-ids 1..50``) get distinct 1280x2000 PNG screenshots for their images, every run's top 10 and their
L1 items; the other images are never read (``--no-check-images``). Each image's bytes differ (a trailing
comment after IEND), so neither the page nor the cache can share a thumbnail between two items.

    python bench/report_process.py [--rounds 3] [--source DIR]

``--source``: a checkout whose ``mmrhub`` is run instead (e.g. ``git archive`` of the commit before the change).
One process first fills the judgment and datasets caches; then each round times a process with the thumbnail
cache emptied (cold) and one with it as the previous process left it (warm).
"""

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image
from PIL import ImageDraw

sys.path.insert(0, str(Path(__file__).parent))
from make_mipr_synthetic import make  # noqa: E402

QUERIES = 50


def screenshot(seed: int) -> bytes:
    """A web-page-like PNG: white, with lines of grey 'text', a few coloured blocks and a photo (noise)."""
    rng = random.Random(seed)
    image = Image.new("RGB", (1280, 2000), "white")
    draw = ImageDraw.Draw(image)
    for top in range(40, 2000, 28):
        draw.rectangle((60, top, 60 + rng.randint(300, 1160), top + 12), fill=(rng.randint(60, 120),) * 3)
    for _ in range(6):
        x, y = rng.randint(0, 1000), rng.randint(0, 1700)
        draw.rectangle((x, y, x + 260, y + 280), fill=tuple(rng.randint(0, 255) for _ in range(3)))
    image.paste(Image.frombytes("RGB", (300, 300), rng.randbytes(300 * 300 * 3)), (900, 200))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def prepare(folder: Path) -> list:
    """The data folder and two runs; returns the runs' paths."""
    make(folder)
    rng = random.Random(1)
    judged = {}
    with open(folder / "mipr_annotation.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            judged[row["idx"]] = [(item["item_id"], item["final_grade"]) for item in row["items"]]
    runs, shown = [], {str(q) for q in range(1, QUERIES + 1)}
    wanted = {item for qid in shown for item, grade in judged[qid] if grade == "L1"}
    for name in ("a", "b"):
        entries = []
        for qid, items in judged.items():
            ranked = rng.sample([item for item, _ in items], 50)
            entries.append({"qid": qid, "ranked": [{"did": d, "score": 50 - i} for i, d in enumerate(ranked)]})
            if qid in shown:
                wanted.update(ranked[:10])
        path = folder / f"run_{name}.json"
        path.write_text(json.dumps(entries))
        runs.append(path)
    base = screenshot(0)
    for number, item in enumerate(sorted(wanted)):
        (folder / "images" / "product_images" / f"{item}.jpg").write_bytes(base + b"item %d" % number)
    for qid in shown:
        (folder / "images" / "query_images" / f"{qid}.jpg").write_bytes(base + b"query " + qid.encode())
    print(f"{len(wanted)} distinct product screenshots of {len(base) / 1e3:.0f} KB", file=sys.stderr)
    return runs


def report(folder: Path, runs: list, hf_home: str, source) -> float:
    """Seconds of one whole ``mmrhub report`` process."""
    env = dict(os.environ, HF_HOME=hf_home, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    if source:
        env["PYTHONPATH"] = str(source)
    command = [
        sys.executable,
        "-m",
        "mmrhub.cli",
        "report",
        "mipr",
        *map(str, runs),
        "--data-dir",
        str(folder),
        "--no-check-images",
        "--query-ids",
        # the code before comma lists took one argument per id
        *(map(str, range(1, QUERIES + 1)) if source else [",".join(map(str, range(1, QUERIES + 1)))]),
        "-o",
        str(folder / "page.html"),
    ]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", help="run the mmrhub of this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "mipr"
        runs = prepare(folder)
        hf_home = str(Path(scratch) / "hf")
        report(folder, runs, hf_home, args.source)
        cold, warm = [], []
        for _ in range(args.rounds):
            shutil.rmtree(Path(hf_home) / "mmrhub" / "thumbnails", ignore_errors=True)
            cold.append(report(folder, runs, hf_home, args.source))
            warm.append(report(folder, runs, hf_home, args.source))
        size = (folder / "page.html").stat().st_size / 1e6
        print(
            f"cold {statistics.median(cold):.2f} s, warm {statistics.median(warm):.2f} s (medians of "
            f"{args.rounds}); page {size:.1f} MB"
        )


if __name__ == "__main__":
    main()
