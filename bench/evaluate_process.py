"""What a user feels: `mmrhub evaluate mipr` as a whole process against the 20-line pytrec_eval script.

    python bench/evaluate_process.py [--rounds 5] [--keep DIR]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py: 3,522 queries, 30,731 products, 447,809 judgments) and
ten top-50 runs. Each figure times a whole process, interpreter start, imports, reading the files, validation
and scoring included, the two sides alternating, median of the rounds; peak RSS is the child's maximum resident
set. Cases:

- one run: `mmrhub evaluate mipr RUN --data-dir DIR` against `python bench/peer_pytrec_eval.py DIR RUN`, and (first
  call and warm) against `python bench/peer_plain.py DIR RUN`, the shortest honest peer (json and plain Python,
  the judgments read a line at a time into what scoring needs, no pytrec_eval structures);
- ten runs: one `mmrhub evaluate mipr RUN x10` against the script scoring the same ten in one process;
- the metric module: `python bench/score_with_evaluate.py DIR RUN` (`json` + `evaluate.load("metrics/mipr")
  .compute(...)`, run with ``--evaluate-python``, default this interpreter) against the same script;
- a top-1000 run: one warm `mmrhub evaluate` of it as official JSON against the same run as TREC;
- memory of a run: a process that reads and validates one large run (1,000 ids a query, JSON / TREC / CSV),
  its peak RSS minus that of the same process reading a one-id-a-query run, against the file's size; and the
  same for a whole warm `mmrhub evaluate` of each.

Children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed), as after ``pip install``, which
compiles every module: otherwise each mmrhub process would compile its own modules again.

mmrhub keeps the validated judgment tables between processes (``mmrhub/scoring/judgment_cache.py``); "first call" starts
each mmrhub process with an empty one. The files are in the page cache for both sides.
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

HERE = Path(__file__).resolve().parent
PEER = HERE / "peer_pytrec_eval.py"
PLAIN_PEER = HERE / "peer_plain.py"  # the shortest honest peer: json and plain Python, only what scoring needs


USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed(argv, env=None) -> tuple:
    """(wall seconds, peak RSS in MiB) of one child process, which must succeed.

    A child's peak RSS starts at its parent's (it survives fork and exec), so this process stays small: the data
    are generated in a process of their own (``--generate``).
    """
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or USER_ENV)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status:
        raise SystemExit(f"{argv} failed:\n{child.stderr.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def write_runs(data_dir: Path, out: Path, count: int, depth: int, seed: int = 0, prefix: str = "run") -> list:
    """Runs mixing judged and unjudged products, as a retriever's top-``depth`` would."""
    rng = random.Random(seed)
    rows = [json.loads(line) for line in open(data_dir / "mipr_annotation.jsonl", encoding="utf-8")]
    corpus = [json.loads(line)["item_id"] for line in open(data_dir / "mipr_corpus.jsonl", encoding="utf-8")]
    paths = []
    for number in range(count):
        run = []
        for row in rows:
            judged = [item["item_id"] for item in row["items"]]
            pool = list(dict.fromkeys(rng.sample(judged, min(len(judged), depth // 2)) + rng.sample(corpus, depth)))[
                :depth
            ]
            rng.shuffle(pool)
            run.append(
                {
                    "qid": row["idx"],
                    "ranked": [{"did": d, "score": round(1 - r / depth, 6)} for r, d in enumerate(pool)],
                }
            )
        paths.append(out / f"{prefix}{number}.json")
        paths[-1].write_text(json.dumps(run), encoding="utf-8")
    return paths


def as_trec(path: Path) -> Path:
    out = path.with_suffix(".trec")
    with open(out, "w", encoding="utf-8") as f:
        for entry in json.loads(path.read_text(encoding="utf-8")):
            for rank, item in enumerate(entry["ranked"], 1):
                f.write(f"{entry['qid']} Q0 {item['did']} {rank} {item['score']} bench\n")
    return out


def as_kaggle(path: Path) -> Path:
    """The run in the M2KR Kaggle layout (``question_id,passage_id`` with a JSON list of ids)."""
    out = path.with_suffix(".csv")
    with open(out, "w", encoding="utf-8") as f:
        f.write("question_id,passage_id\n")
        for entry in json.loads(path.read_text(encoding="utf-8")):
            ids = json.dumps([item["did"] for item in entry["ranked"]]).replace('"', '""')
            f.write(f'{entry["qid"]},"{ids}"\n')
    return out


def compare(name, ours, peer, rounds: int, cold: bool = False) -> dict:
    """``cold``: each mmrhub process starts with an empty cache of validated tables (a fresh HF_HOME)."""
    times = {"mmrhub": [], "peer": []}
    memory = {"mmrhub": [], "peer": []}
    for _ in range(rounds):
        for side, argv in (("mmrhub", ours), ("peer", peer)):
            env = {**USER_ENV, "HF_HOME": tempfile.mkdtemp(prefix="mmrhub-hf-")} if cold and side == "mmrhub" else None
            seconds, rss = timed(argv, env)
            times[side].append(seconds)
            memory[side].append(rss)
    row = {side: (statistics.median(times[side]), max(memory[side])) for side in times}
    ratio_time, ratio_rss = row["mmrhub"][0] / row["peer"][0], row["mmrhub"][1] / row["peer"][1]
    print(
        f"| {name} | {row['mmrhub'][0]:.2f} s, {row['mmrhub'][1]:.0f} MiB | {row['peer'][0]:.2f} s, "
        f"{row['peer'][1]:.0f} MiB | **{ratio_time:.2f}** | **{ratio_rss:.2f}** |",
        flush=True,
    )
    return row


# Only the ids validation needs, so the fixed part of the process stays small beside the run.
READ_AND_VALIDATE = """
import sys
import pyarrow as pa
import pyarrow.json as paj
from mmrhub.scoring import pandas_free
from mmrhub.scoring.runs.reading import read_run
from mmrhub.scoring.runs.validation import validate
from mmrhub.scoring.judgments import Truth
with pandas_free.kept_out():
    ids = lambda name, column: paj.read_json(f"{sys.argv[1]}/{name}")[column].combine_chunks()
    queries, corpus = ids("mipr_query.jsonl", "idx"), ids("mipr_corpus.jsonl", "item_id")
    truth = Truth(queries, corpus, None, {}, pa.nulls(0, pa.string()))
    validate(read_run(sys.argv[2]), truth)
"""


def generate(work: Path) -> None:
    """The synthetic data, ten top-50 runs, a 1-id and a 1,000-id run (JSON, TREC and Kaggle CSV), and the TREC
    one with its queries reversed (what is there already is kept)."""
    data_dir = work / "mipr"
    if not (work / "large0.trec").is_file():
        make_mipr_synthetic.make(data_dir)
        write_runs(data_dir, work, 10, 50)
        for depth, prefix in ((1, "small"), (1000, "large")):
            as_trec(write_runs(data_dir, work, 1, depth, seed=depth, prefix=prefix)[0])
    reversed_queries(work / "large0.trec")
    for prefix in ("small", "large"):
        if not (work / f"{prefix}0.csv").is_file():
            as_kaggle(work / f"{prefix}0.json")


def reversed_queries(trec: Path) -> Path:
    """The same TREC run with its queries in reverse order: validation must then reorder the rankings."""
    out = trec.with_name(f"{trec.stem}-reversed.trec")
    if not out.is_file():
        groups = {}
        with open(trec, encoding="utf-8") as lines:
            for line in lines:
                groups.setdefault(line.split(" ", 1)[0], []).append(line)
        out.write_text("".join(line for lines in reversed(groups.values()) for line in lines), encoding="utf-8")
    return out


def run_memory(data_dir: Path, work: Path) -> None:
    """Peak RSS of reading + validating a large run, above a tiny run's, against the file's size."""
    small, large = work / "small0.json", work / "large0.json"
    python = [sys.executable, "-c", READ_AND_VALIDATE, str(data_dir)]
    print(
        "\n| run format | file | peak RSS, 1-id run | peak RSS, this run | difference / file size |\n"
        "|---|---:|---:|---:|---:|"
    )
    trec, small_trec = large.with_suffix(".trec"), small.with_suffix(".trec")
    reordered = trec.with_name(f"{trec.stem}-reversed.trec")
    cases = (
        ("JSON", large, small),
        ("TREC", trec, small_trec),
        ("TREC, queries reversed", reordered, small_trec),
        ("Kaggle CSV", large.with_suffix(".csv"), small.with_suffix(".csv")),
    )
    for name, path, small_path in cases:
        base = min(timed(python + [str(small_path)])[1] for _ in range(2))
        peak = min(timed(python + [str(path)])[1] for _ in range(2))
        size = path.stat().st_size / 2**20
        print(f"| {name} | {size:.0f} MiB | {base:.0f} MiB | {peak:.0f} MiB | **{(peak - base) / size:.2f}** |")


def evaluate_memory(mmrhub: list, work: Path) -> None:
    """Peak RSS of a whole warm ``mmrhub evaluate`` of the large run, above that of the 1-id run, against the
    file's size: reading, validation, scoring and the output, as a user runs it."""
    print(
        "\n| run format (whole `evaluate`) | file | peak RSS, 1-id run | peak RSS, this run "
        "| difference / file size |\n"
        "|---|---:|---:|---:|---:|"
    )
    timed(mmrhub + [str(work / "small0.json")])  # fills the judgment cache
    for name, suffix in (("JSON", ".json"), ("TREC", ".trec"), ("Kaggle CSV", ".csv")):
        path, small = (work / "large0").with_suffix(suffix), (work / "small0").with_suffix(suffix)
        base = min(timed(mmrhub + [str(small)])[1] for _ in range(2))
        peak = min(timed(mmrhub + [str(path)])[1] for _ in range(2))
        size = path.stat().st_size / 2**20
        print(f"| {name} | {size:.0f} MiB | {base:.0f} MiB | {peak:.0f} MiB | **{(peak - base) / size:.2f}** |")


def json_against_trec(mmrhub: list, work: Path, rounds: int) -> None:
    """A whole warm ``mmrhub evaluate`` of the top-1000 run as official JSON against the same run as TREC."""
    times = {"JSON": [], "TREC": []}
    timed(mmrhub + [str(work / "small0.json")])  # fills the judgment cache
    for _ in range(rounds):
        for name, suffix in (("JSON", ".json"), ("TREC", ".trec")):
            times[name].append(timed(mmrhub + [str((work / "large0").with_suffix(suffix))])[0])
    json_s, trec_s = statistics.median(times["JSON"]), statistics.median(times["TREC"])
    print(
        f"\n| top-1000 run, whole warm `evaluate` | JSON | TREC | JSON / TREC |\n|---|---:|---:|---:|\n"
        f"| median of {rounds}, alternating | {json_s:.2f} s | {trec_s:.2f} s | **{json_s / trec_s:.2f}** |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", help="write the synthetic data here (default: a temporary folder)")
    parser.add_argument(
        "--evaluate-python",
        default=sys.executable,
        help="the interpreter of the metric-module row (e.g. a venv without transformers)",
    )
    parser.add_argument(
        "--only", choices=("runs",), help="runs: only the top-1000 JSON-against-TREC time and the memory tables"
    )
    parser.add_argument("--generate", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        return generate(Path(args.generate))
    work = Path(args.keep or tempfile.mkdtemp(prefix="mmrhub-bench-"))
    data_dir = work / "mipr"
    if not (work / "large0.csv").is_file():
        subprocess.run([sys.executable, __file__, "--generate", str(work)], check=True)
    runs = sorted(work.glob("run[0-9].json"))
    mmrhub = [str(Path(sys.executable).parent / "mmrhub"), "evaluate", "mipr", "--data-dir", str(data_dir)]
    peer = [sys.executable, str(PEER), str(data_dir)]
    if args.only == "runs":
        json_against_trec(mmrhub, work, args.rounds)
        run_memory(data_dir, work)
        return evaluate_memory(mmrhub, work)
    print(
        "| case (whole process) | mmrhub | peer (the pytrec_eval script unless named) | time ratio | peak RSS ratio |\n"
        "|---|---:|---:|---:|---:|"
    )
    compare("one run, first call (empty cache)", mmrhub + [str(runs[0])], peer + [str(runs[0])], args.rounds, cold=True)
    compare("one run", mmrhub + [str(runs[0])], peer + [str(runs[0])], args.rounds)
    plain = [sys.executable, str(PLAIN_PEER), str(data_dir), str(runs[0])]
    compare("one run, first call, against `peer_plain.py`", mmrhub + [str(runs[0])], plain, args.rounds, cold=True)
    compare("one run, against `peer_plain.py`", mmrhub + [str(runs[0])], plain, args.rounds)
    compare(
        "ten runs, one process", mmrhub + list(map(str, runs)), peer + list(map(str, runs)), max(2, args.rounds // 2)
    )
    module = [args.evaluate_python, str(HERE / "score_with_evaluate.py"), str(data_dir), str(runs[0])]
    compare("metric module, `evaluate.load(...).compute(...)`", module, peer + [str(runs[0])], max(2, args.rounds // 2))
    json_against_trec(mmrhub, work, args.rounds)
    run_memory(data_dir, work)
    evaluate_memory(mmrhub, work)


if __name__ == "__main__":
    main()
