"""What a user feels: `mmrhub compare mipr` of 3, 5 and 8 runs as whole processes, against the script a user would
write instead (`bench/peer_compare.py`: json + pytrec_eval + numpy).

    python bench/compare_process.py [--rounds 3] [--runs 3,5,8] [--keep DIR] [--source OLD_CHECKOUT]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py) and top-50 runs (the ones bench/evaluate_process.py
writes). Each figure times a whole process, interpreter start, imports, reading and scoring every run and the
paired tests of every pair (10,000 sign flips, seed 0) included; the sides alternate, median of the rounds, after
one untimed call of each (so mmrhub's cache of validated judgment tables is filled, as after a first command).
Each cell gives the wall time and, in brackets, the CPU time (user + system over all threads), which other jobs on a
shared machine disturb less; the ratios are of wall times, then of CPU times.
mmrhub tests 6 measures a pair (two of them subtopic coverage), the peer the 4 that pytrec_eval has.
``--source``: also time the mmrhub of that checkout (e.g. ``git archive`` of the commit before the change), run
through ``python -c`` in that checkout's folder with it on ``PYTHONPATH``, in the same rounds (``-c`` puts the
working folder first: run from this checkout, "before" would be this code).
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
PEER = HERE / "peer_compare.py"
USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
CONSOLE = "from mmrhub.cli import console; console()"


def timed(argv, env=None, cwd=None) -> tuple:
    """(wall seconds, CPU seconds: user + system, all threads) of one child process, which must succeed."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or USER_ENV, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status:
        raise SystemExit(f"{argv} failed:\n{child.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", default="3,5,8", help="how many runs each case compares")
    parser.add_argument("--keep", help="the synthetic data's folder (default: a temporary one)")
    parser.add_argument("--source", help="also time the mmrhub of this checkout")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="mmrhub-bench-")).resolve()  # the children run elsewhere
    data_dir = work / "mipr"
    if not (work / "large0.csv").is_file():
        subprocess.run([sys.executable, str(HERE / "evaluate_process.py"), "--generate", str(work)], check=True)
    runs = sorted(work.glob("run[0-9].json"))
    env = {**USER_ENV, "HF_HOME": tempfile.mkdtemp(prefix="mmrhub-hf-")}
    # (argv, env, the folder it runs in: `python -c` imports that folder's mmrhub first)
    command = [sys.executable, "-c", CONSOLE, "compare", "mipr", "--data-dir", str(data_dir)]
    sides = {"mmrhub": (command, env, HERE.parent)}
    if args.source:
        source = Path(args.source).resolve()
        sides["before"] = (command, {**env, "PYTHONPATH": str(source)}, source)
    sides["peer"] = ([sys.executable, str(PEER), str(data_dir)], None, None)
    heading = " | ".join(["runs (pairs)", *sides, *(f"{side} / peer (CPU)" for side in sides if side != "peer")])
    print(f"| {heading} |\n|{'---|' * (1 + 2 * len(sides) - 1)}")
    for count in map(int, args.runs.split(",")):
        paths = list(map(str, runs[:count]))
        times = {side: [] for side in sides}
        for side, (argv, side_env, cwd) in sides.items():
            timed(argv + paths, side_env, cwd)  # untimed: fills mmrhub's judgment cache, warms the page cache
        for _ in range(args.rounds):
            for side, (argv, side_env, cwd) in sides.items():
                times[side].append(timed(argv + paths, side_env, cwd))
        wall = {side: statistics.median(t[0] for t in values) for side, values in times.items()}
        cpu = {side: statistics.median(t[1] for t in values) for side, values in times.items()}
        cells = [
            f"{count} ({count * (count - 1) // 2})",
            *(f"{wall[side]:.2f} s ({cpu[side]:.2f} s)" for side in sides),
        ]
        cells += [
            f"**{wall[side] / wall['peer']:.2f}** ({cpu[side] / cpu['peer']:.2f})" for side in sides if side != "peer"
        ]
        print(f"| {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
