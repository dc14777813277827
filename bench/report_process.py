"""Time a whole ``mmrhub report mipr A B -o page.html`` process on full-scale synthetic MIPR with real-size images.

The tables come from ``make_mipr_synthetic.py`` (3,522 queries, 30,731 products); the gallery's 50 queries
(``--query-ids 1..50``) get distinct 1280x2000 PNG screenshots for their images, every run's top 10 and their
L1 items; the other images are never read (``--no-check-images``). Each image's bytes differ (a trailing
comment after IEND), so neither the page nor the cache can share a thumbnail between two items.

    python bench/report_process.py [--rounds 3] [--source DIR] [--against-one-run]

``--source``: a checkout whose ``mmrhub`` is run instead (e.g. ``git archive`` of the commit before the change).
One process first fills the judgment and datasets caches; then each round times a process with the thumbnail
cache emptied (cold) and one with it as the previous process left it (warm). ``--against-one-run``: each round
instead times the report of run A alone (the peer) and of A and B, in alternating order, both with the
thumbnail cache warm, and prints the ratio (issue 39).
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


def environment(hf_home: str, source) -> dict:
    env = dict(os.environ, HF_HOME=hf_home, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    if source:
        env["PYTHONPATH"] = str(source)
    return env


def checkout(source) -> str:
    """Where to run ``python -m``: it puts the working folder before PYTHONPATH, so the checkout's own root."""
    return str(source or Path(__file__).resolve().parent.parent)


def takes_comma_lists(hf_home: str, source) -> bool:
    """Whether this mmrhub's --query-ids takes a comma list (code before took one argument per id)."""
    command = [sys.executable, "-m", "mmrhub.cli", "report", "mipr", "--help"]
    shown = subprocess.run(
        command, env=environment(hf_home, source), cwd=checkout(source), capture_output=True, text=True, check=True
    )
    return "ID[,ID...]" in shown.stdout


def report(folder: Path, runs: list, hf_home: str, source, commas: bool = True) -> float:
    """Seconds of one whole ``mmrhub report`` process."""
    ids = [str(number) for number in range(1, QUERIES + 1)]
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
        *([",".join(ids)] if commas else ids),
        "-o",
        str(folder / "page.html"),
    ]
    env = environment(hf_home, source)
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=checkout(source), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def against_one_run(folder: Path, runs: list, hf_home: str, source, commas: bool, rounds: int) -> None:
    """Run A alone and A with B, alternating which goes first, the thumbnail cache as the filling process left it."""
    one, two, sizes = [], [], {}
    for number in range(rounds):
        for count in (1, 2) if number % 2 == 0 else (2, 1):
            (one if count == 1 else two).append(report(folder, runs[:count], hf_home, source, commas))
            sizes[count] = (folder / "page.html").stat().st_size / 1e6
    ratios = [b / a for a, b in zip(one, two)]
    print(
        f"one run {statistics.median(one):.2f} s, two runs {statistics.median(two):.2f} s (medians of {rounds}); "
        f"ratio median {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}); "
        f"pages {sizes[1]:.2f} MB and {sizes[2]:.2f} MB"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", help="run the mmrhub of this checkout")
    parser.add_argument("--against-one-run", action="store_true", help="time A alone against A and B (warm cache)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "mipr"
        runs = prepare(folder)
        hf_home = str(Path(scratch) / "hf")
        commas = takes_comma_lists(hf_home, args.source)
        report(folder, runs, hf_home, args.source, commas)
        if args.against_one_run:
            return against_one_run(folder, runs, hf_home, args.source, commas, args.rounds)
        cold, warm = [], []
        for _ in range(args.rounds):
            shutil.rmtree(Path(hf_home) / "mmrhub" / "thumbnails", ignore_errors=True)
            cold.append(report(folder, runs, hf_home, args.source, commas))
            warm.append(report(folder, runs, hf_home, args.source, commas))
        size = (folder / "page.html").stat().st_size / 1e6
        print(
            f"cold {statistics.median(cold):.2f} s, warm {statistics.median(warm):.2f} s (medians of "
            f"{args.rounds}); page {size:.1f} MB"
        )


if __name__ == "__main__":
    main()
