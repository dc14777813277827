"""Whole ``mipr.load`` processes on a warm cache: the builder keying its tables on content against the same builder
at an earlier commit (keyed on size, times and inode), and ``load_dataset("json", ...)`` as the peer.

Each measurement is one fresh process (interpreter start, imports, cache key, reading datasets' cache) loading the
three configs of a full-scale synthetic MIPR whose cache an earlier process filled; sides alternate, median of the
rounds. Also prints the cost of the cache key alone, in process.

    python bench/mipr_load_process.py [--data-dir DIR] [--rounds 7] [--before 5f35c0e]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_mipr_synthetic import make

ROOT = Path(__file__).resolve().parent.parent

BUILDER = """
import sys
sys.path.insert(0, {source!r})
import datasets
datasets.disable_progress_bars()
import mipr
for config in mipr.CONFIG_NAMES:
    mipr.load(config, data_dir={data_dir!r}, cache_dir={cache!r})
"""
PEER = """
import datasets
datasets.disable_progress_bars()
from datasets import load_dataset
for name in ("mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"):
    load_dataset("json", data_files={{"test": f"{data_dir}/{{name}}"}}, split="test", cache_dir={cache!r})
"""
KEY_COST = """
import sys, time
sys.path.insert(0, {source!r})
import mipr
for config in mipr.CONFIG_NAMES:
    args = ({data_dir!r}, config) if mipr.cache_hash.__code__.co_argcount > 1 else ({data_dir!r},)
    start = time.perf_counter()
    for _ in range(5):
        mipr.cache_hash(*args)
    print(config, (time.perf_counter() - start) / 5)
"""


def run(code: str, hf_home: str) -> float:
    env = {"HF_HOME": hf_home, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start


def key_cost(source: str, data_dir: str, hf_home: str) -> str:
    env = {"HF_HOME": hf_home, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    code = KEY_COST.format(source=source, data_dir=data_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return ", ".join(f"{config} {float(seconds) * 1000:.1f} ms" for config, seconds in map(str.split, out.splitlines()))


def old_builder(revision: str, folder: Path) -> str:
    """``mipr.py`` and ``mipr_format.py`` as they were at ``revision``."""
    for name in ("mipr.py", "mipr_format.py"):
        text = subprocess.run(["git", "show", f"{revision}:{name}"], cwd=ROOT, capture_output=True, check=True).stdout
        (folder / name).write_bytes(text)
    return str(folder)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help="a MIPR data dir (default: generate the full-scale synthetic one)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", default="5f35c0e", help="the commit whose builder keys on metadata")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        data_dir = args.data_dir or str(make(scratch / "mipr"))
        (scratch / "before").mkdir()
        sources = {"before (metadata)": old_builder(args.before, scratch / "before"), "after (content)": str(ROOT)}
        hf_home = str(scratch / "hf")
        codes = {
            name: BUILDER.format(source=source, data_dir=data_dir, cache=str(scratch / f"cache-{index}"))
            for index, (name, source) in enumerate(sources.items())
        }
        codes["load_dataset('json')"] = PEER.format(data_dir=data_dir, cache=str(scratch / "cache-json"))
        for code in codes.values():
            run(code, hf_home)  # fills the cache
        times = {name: [] for name in codes}
        for _ in range(args.rounds):  # alternating, so machine noise hits every side alike
            for name, code in codes.items():
                times[name].append(run(code, hf_home))
        for name, source in sources.items():
            print(f"cache key alone, {name}: {key_cost(source, data_dir, hf_home)}")
    peer = statistics.median(times["load_dataset('json')"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"{name:22s} {median:6.2f} s (min {min(runs):.2f})  ratio to json {median / peer:.2f}")


if __name__ == "__main__":
    main()
