"""Preparation time and peak memory of the MIPR builder against ``load_dataset("json", ...)``, in one run.

Each measurement runs in a fresh process with an empty cache; both sides prepare all three tables
(queries, corpus, qrels). Peak memory is the child's maximum resident set size. Target: time ratio <= 1.3,
memory ratio <= 1.0.

    python bench/mipr_prepare.py [--data-dir DIR] [--repeats 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from make_mipr_synthetic import make

ROOT = Path(__file__).resolve().parent.parent

OURS = """
import mipr
for config in mipr.CONFIG_NAMES:
    mipr.load(config, data_dir=DATA_DIR, cache_dir=CACHE)
"""
PEER = """
from datasets import load_dataset
for name in ("mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"):
    load_dataset("json", data_files={"test": f"{DATA_DIR}/{name}"}, split="test", cache_dir=CACHE)
"""
HARNESS = """
import os, resource, sys, tempfile, time
sys.path.insert(0, {root!r})
import datasets
datasets.disable_progress_bars()
DATA_DIR, CACHE = {data_dir!r}, tempfile.mkdtemp()
start = time.perf_counter()
{body}
seconds = time.perf_counter() - start
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def measure(body: str, data_dir: str):
    code = HARNESS.format(root=str(ROOT), data_dir=data_dir, body=body)
    with tempfile.TemporaryDirectory() as hf_home:
        env = {"HF_HOME": hf_home, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    seconds, max_rss_kb = out.stdout.split()
    return float(seconds), int(max_rss_kb) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help="a MIPR data dir (default: generate the full-scale synthetic one)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        data_dir = args.data_dir or str(make(Path(scratch) / "mipr"))
        results = {"mipr builder": [], "load_dataset('json')": []}
        for _ in range(args.repeats):  # interleaved, so machine noise hits both sides alike
            results["mipr builder"].append(measure(OURS, data_dir))
            results["load_dataset('json')"].append(measure(PEER, data_dir))
    summary = {
        name: {"seconds": statistics.median(s for s, _ in runs), "peak_mib": statistics.median(m for _, m in runs)}
        for name, runs in results.items()
    }
    ours, peer = summary["mipr builder"], summary["load_dataset('json')"]
    for name, row in summary.items():
        print(f"{name:24s} {row['seconds']:7.2f} s  {row['peak_mib']:8.1f} MiB peak")
    print(f"time ratio   (ours / json): {ours['seconds'] / peer['seconds']:.2f}  (target <= 1.30)")
    print(f"memory ratio (ours / json): {ours['peak_mib'] / peer['peak_mib']:.2f}  (target <= 1.00)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
