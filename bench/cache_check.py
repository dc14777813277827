"""What checking a cache entry's bytes costs a warm `mmrhub evaluate mipr`: the same call with the check on and off.

    python bench/cache_check.py [--rounds 15] [--keep DIR]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py: 3,522 queries, 30,731 products, 447,809 judgments) and
one top-50 run. A first call fills the judgment cache (``$HF_HOME/mmrhub/truth``); then warm calls alternate
between the two sides, median of the rounds:

- check on: `mmrhub evaluate mipr RUN --data-dir DIR`, as a user runs it (``mmr_cache.read_entry`` hashes every
  file of the entry, xxh3-128, and compares with its ``entry.json``);
- check off: the same process with ``mmr_cache.CHECK_BYTES = False`` (the entry's key, file names and sizes are
  still checked: what the cache trusted before).

Both are whole processes (interpreter start, imports, the cache key over the three source files, the entry read,
the run read and validated, the scoring), started through the same ``-c`` line. In process, the entry's read is
also timed alone both ways (best of 20), so the figure is seen apart from the noise of whole processes.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The child: evaluate as the mmrhub executable runs it, the check on or off, and the entry read's own time on stderr.
CHILD = """
import atexit, sys, time
import mmr_cache
mmr_cache.CHECK_BYTES = sys.argv.pop(1) == "on"
from mmrhub.scoring import judgment_cache
load, spent = judgment_cache.load, []
def timed_load(key):
    started = time.perf_counter()
    tables = load(key)
    spent.append(time.perf_counter() - started)
    return tables
judgment_cache.load = timed_load
atexit.register(lambda: print(f"entry-read {sum(spent)!r}", file=sys.stderr))
from mmrhub.cli import console
console()
"""


def env(hf_home: Path) -> dict:
    """The children's environment: bytecode caching on (as after pip install), this checkout first on the path."""
    values = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**values, "HF_HOME": str(hf_home), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def timed(argv, environment) -> tuple:
    """(wall seconds of the whole process, seconds of its entry read)."""
    started = time.perf_counter()
    result = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
    seconds = time.perf_counter() - started
    if result.returncode:
        raise SystemExit(f"{argv} failed:\n{result.stderr.decode()[-2000:]}")
    return seconds, float(result.stderr.decode().rsplit("entry-read ", 1)[1])


def in_process(data_dir: Path, hf_home: Path) -> dict:
    """Best of 20 of the entry read (``judgment_cache.load``) with the check on and off, and the entry's size."""
    os.environ["HF_HOME"] = str(hf_home)
    sys.path.insert(0, str(ROOT))
    import mmr_cache
    from mmrhub.benchmarks import MIPR
    from mmrhub.scoring import judgment_cache

    MIPR.read_truth(data_dir)  # the entry, as evaluate made it
    (entry,) = [folder for folder in judgment_cache.cache_root().iterdir() if not folder.name.startswith(".")]
    size = sum(path.stat().st_size for path in entry.iterdir())
    best = {}
    for check in (True, False, True, False):
        mmr_cache.CHECK_BYTES = check
        times = []
        for _ in range(20):
            started = time.perf_counter()
            assert judgment_cache.load(entry.name) is not None
            times.append(time.perf_counter() - started)
        best[check] = min(times + [best.get(check, float("inf"))])
    mmr_cache.CHECK_BYTES = True
    return {"bytes": size, "on": best[True], "off": best[False]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--keep", help="write the data here (an empty or new folder) and keep it")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import make_mipr_synthetic
    from evaluate_process import write_runs

    work = Path(args.keep or tempfile.mkdtemp(prefix="mmrhub-cache-check-"))
    data_dir = work / "mipr"
    if not (data_dir / "mipr_annotation.jsonl").is_file():
        make_mipr_synthetic.make(data_dir)
    (run,) = write_runs(data_dir, work, count=1, depth=50)
    hf_home = work / "hf"
    environment = env(hf_home)
    argv = ["evaluate", "mipr", str(run), "--data-dir", str(data_dir)]
    for side in ("on", "off"):  # the first fills the cache; one more of each leaves the files in the page cache
        timed([sys.executable, "-c", CHILD, side, *argv], environment)
    seconds, reads = {"on": [], "off": []}, {"on": [], "off": []}
    for number in range(args.rounds):
        for side in ("on", "off") if number % 2 else ("off", "on"):  # each side first in half the rounds
            whole, read = timed([sys.executable, "-c", CHILD, side, *argv], environment)
            seconds[side].append(whole)
            reads[side].append(read)
    on, off = statistics.median(seconds["on"]), statistics.median(seconds["off"])
    read_on, read_off = statistics.median(reads["on"]), statistics.median(reads["off"])
    alone = in_process(data_dir, hf_home)
    print(f"warm `mmrhub evaluate mipr`, whole process, median of {args.rounds} rounds:")
    print(f"  check on  {on:.3f} s")
    print(f"  check off {off:.3f} s")
    print(f"  ratio on / off {on / off:.3f} ({(on - off) / off:+.1%})")
    print(f"the entry read inside those processes, median: on {read_on * 1e3:.1f} ms, off {read_off * 1e3:.1f} ms")
    print(f"  the check: {(read_on - read_off) * 1e3:.1f} ms, {(read_on - read_off) / off:.1%} of the call")
    print(f"the entry read alone ({alone['bytes'] / 2**20:.1f} MiB of Arrow files), best of 20:")
    print(f"  check on  {alone['on'] * 1e3:.1f} ms, check off {alone['off'] * 1e3:.1f} ms")
    check = alone["on"] - alone["off"]
    print(f"  the check: {check * 1e3:.1f} ms, {check / off:.1%} of the call")


if __name__ == "__main__":
    main()
