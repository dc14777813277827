"""`mmrhub reproduce mipr` as a whole process against one warm `mmrhub evaluate mipr` of the same shipped runs.

    python bench/reproduce_process.py [--rounds 5] [--keep DIR] [--queries N] [--brute-force]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py: 3,522 queries, 30,731 products, 447,809 judgments; with
``--queries N`` only the first N queries are kept) and, as the official data ships them, a top-50 embedding run
and a reranking of its pools under data/baseline/. Each figure times a whole process (interpreter start, imports,
reading the files, validation, oracles and scoring), the two commands alternating, median of the rounds, after
one untimed call of each so that both find the judgment tables cached. `evaluate` scores the three rows once;
`reproduce` scores them under all 64 combinations of readings. ``--brute-force`` adds one process running the
search as it was before: ``score_runs`` once per combination.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import make_mipr_synthetic
from evaluate_process import USER_ENV
from evaluate_process import write_runs

EMBEDDING, RERANKER = "baseline/qwen3_vl_embedding_8b_top50.json", "baseline/qwen3_vl_reranker_8b_top50.json"

BRUTE_FORCE = """
import sys
from dataclasses import replace
from mmrhub.benchmarks import MIPR
from mmrhub.scoring import pandas_free
from mmrhub.scoring.readings import combinations
from mmrhub.scoring.request import ScoringRequest
from mmrhub.scoring.score import load_truth, score_runs
with pandas_free.kept_out():
    shipped = ScoringRequest(MIPR, sys.argv[1]).with_shipped_runs()
    truth = load_truth(shipped)
    for measure_options, oracle_options in combinations(MIPR):
        score_runs(replace(shipped, measure_options=measure_options, oracle_options=oracle_options), truth)
"""


def timed(argv) -> tuple:
    """(wall seconds, peak RSS in MiB) of one child process; exit 1 is `reproduce` finding no combination."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=USER_ENV)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{argv} failed:\n{child.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def keep_queries(data_dir: Path, count: int) -> None:
    """Only the first ``count`` queries and their judgments (the corpus stays whole)."""
    for name in ("mipr_query.jsonl", "mipr_annotation.jsonl"):
        lines = (data_dir / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (data_dir / name).write_text("".join(lines[:count]), encoding="utf-8")


def generate(data_dir: Path, queries: int) -> None:
    """The synthetic data with an embedding run and a reranking of its pools where the official data has them."""
    make_mipr_synthetic.make(data_dir)
    if queries:
        keep_queries(data_dir, queries)
    (data_dir / "baseline").mkdir()
    embedding = write_runs(data_dir, data_dir / "baseline", 1, 50, prefix="embedding")[0]
    embedding.rename(data_dir / EMBEDDING)
    run, rng = json.loads((data_dir / EMBEDDING).read_text(encoding="utf-8")), random.Random(1)
    for entry in run:
        ids = [item["did"] for item in entry["ranked"]]
        rng.shuffle(ids)
        entry["ranked"] = [{"did": did, "score": round(1 - rank / 50, 6)} for rank, did in enumerate(ids)]
    (data_dir / RERANKER).write_text(json.dumps(run), encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", help="write the synthetic data here (default: a temporary folder)")
    parser.add_argument("--queries", type=int, default=0, help="keep only this many queries (default: all 3,522)")
    parser.add_argument("--brute-force", action="store_true", help="also time the per-combination loop, once")
    parser.add_argument("--generate", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        return generate(Path(args.generate), args.queries)
    data_dir = Path(args.keep or tempfile.mkdtemp(prefix="mmrhub-bench-")) / "mipr"
    if not (data_dir / RERANKER).is_file():  # in a process of its own, so that this one stays small
        subprocess.run(
            [sys.executable, __file__, "--generate", str(data_dir), "--queries", str(args.queries)], check=True
        )
    mmrhub = str(Path(sys.executable).parent / "mmrhub")
    commands = {
        "evaluate": [mmrhub, "evaluate", "mipr", "--data-dir", str(data_dir)],
        "reproduce": [mmrhub, "reproduce", "mipr", "--data-dir", str(data_dir)],
    }
    for argv in commands.values():
        timed(argv)
    times, memory = {name: [] for name in commands}, {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, argv in commands.items():
            seconds, rss = timed(argv)
            times[name].append(seconds)
            memory[name].append(rss)
    print("| command (whole process) | time | peak RSS |\n|---|---:|---:|")
    for name in commands:
        print(f"| `{name}` | {statistics.median(times[name]):.2f} s | {max(memory[name]):.0f} MiB |")
    if args.brute_force:
        seconds, rss = timed([sys.executable, "-c", BRUTE_FORCE, str(data_dir)])
        print(f"| per-combination `score_runs` loop (once) | {seconds:.2f} s | {rss:.0f} MiB |")
    ratio = statistics.median(times["reproduce"]) / statistics.median(times["evaluate"])
    print(f"\nreproduce / evaluate: **{ratio:.1f}x** (target < 20x)")


if __name__ == "__main__":
    main()
