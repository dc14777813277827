"""What keying the corpus embeddings and rerank scores on each image's bytes costs a warm `mmrhub retrieve`.

    python bench/image_digests.py [--rounds 7] [--keep DIR] [--image-bytes 0]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py: 3,522 queries over 3,013 query images, 30,731 products,
each its own image file). Each round is a fresh process that, as a warm `retrieve` does before it embeds anything:

- reads the tables: `load_side` of the queries and the corpus from the builders' warm cache entries (the peer);
- the fingerprint of before this change, ids, texts and image names alone (`fingerprint` without digests);
- the image digests (`image_digests` of both sides): every file's `stat` checked against the digests remembered in
  `$HF_HOME/mmrhub/image-digests/`, which a first process filled (the warm check);
- the same with that cache emptied first, once per process (a first run: every image file hashed).

Times are in process (`time.perf_counter`), median of the rounds; the files lie in the page cache.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = """
import json, shutil, sys, time
from mmrhub.benchmarks import MIPR
from mmrhub.retrieve.data_loading import fingerprint, load_side
from mmrhub.image_digests import default_dir, image_digests
from mmrhub.retrieve.options import DataOptions

data, cold = DataOptions(MIPR, data_dir=sys.argv[1]), sys.argv[2] == "cold"
clock = time.perf_counter
started = clock()
sides = [load_side(data, "queries"), load_side(data, "corpus")]
tables = clock() - started
started = clock()
for side in sides:
    fingerprint(side.dataset, side.table, [])
names = clock() - started
if cold:
    shutil.rmtree(default_dir(), ignore_errors=True)
started = clock()
digests = [image_digests(side.dataset) for side in sides]
images = clock() - started
print(json.dumps({"tables": tables, "names": names, "images": images, "rows": sum(map(len, digests))}))
"""


def child(data: Path, hf_home: Path, kind: str) -> dict:
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(data), kind], env=env, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", help="an empty or new folder to keep the data and caches in")
    parser.add_argument("--image-bytes", type=int, default=0, help="each image file's size (default: one tiny JPEG)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from make_mipr_synthetic import make

    root = Path(args.keep or tempfile.mkdtemp(prefix="image-digests-"))
    data, hf_home = root / "mipr", root / "hf"
    if not (data / "mipr_corpus.jsonl").exists():
        make(data, image_bytes=args.image_bytes)
        time.sleep(2.5)  # past image_digests.SETTLE_NS: the files are then remembered, as on any later day
    child(data, hf_home, "warm")  # fills the builders' entries and the digests
    rounds = {"warm": [], "cold": []}
    for number in range(args.rounds):
        for kind in ("warm", "cold") if number % 2 == 0 else ("cold", "warm"):
            rounds[kind].append(child(data, hf_home, kind))
    median = lambda kind, key: statistics.median(r[key] for r in rounds[kind]) * 1000  # noqa: E731
    tables = median("warm", "tables")
    print(f"{rounds['warm'][0]['rows']:,} rows, {args.rounds} rounds, median, ms in process")
    print(f"reading the tables (load_side, both sides, warm builder entries): {tables:.1f} ms")
    print(f"fingerprint of ids, texts and image names (before): {median('warm', 'names'):.1f} ms")
    for kind, what in (("warm", "image digests, warm (stat checked)"), ("cold", "image digests, first run (hashed)")):
        spent = median(kind, "images")
        print(f"{what}: {spent:.1f} ms, {spent / tables:.2f}x reading the tables")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
