"""A full-scale MIPR board: building it, starting its Space, and how long the Space takes to answer an upload against
`mmrhub evaluate` of the same run, as a ratio in the same run.

    python bench/leaderboard_process.py [--rounds 5] [--keep DIR] [--entries 10]

Full-scale synthetic MIPR (bench/make_mipr_synthetic.py: 3,522 queries, 30,731 products, 447,809 judgments) and
top-50 runs (bench/evaluate_process.py's). Figures:

- **build**: `mmrhub leaderboard mipr RUN x10 -o DIR --data-dir DATA` as a whole process (scoring the ten runs, the
  45 pairs of `compare`'s test, copying the judgments and the code), beside `mmrhub evaluate` of the same ten runs
  and `mmrhub compare` of them, each a whole process, for scale;
- **start**: `python app.py` in the board folder until its page answers (judgments read and checked, entries read
  and checked, their comparison), from a warm judgment cache;
- **upload**: one upload answered by the running Space through `gradio_client` (`/score`: the file sent over
  loopback, read, validated and scored, its 10 new pairs tested, the board's page made, the answer received), against
  a whole warm `mmrhub evaluate mipr RUN --data-dir DATA` of the same file, alternating, median of the rounds. Target:
  at most 2x. Peak RSS: the Space process's after every upload (``VmHWM``), beside `evaluate`'s.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import make_mipr_synthetic
from evaluate_process import USER_ENV
from evaluate_process import timed
from evaluate_process import write_runs

HERE = Path(__file__).resolve().parent


def generate(work: Path, entries: int) -> list:
    """The synthetic data and ``entries`` + 1 top-50 runs (the last is uploaded); what is there already is kept."""
    data_dir = work / "mipr"
    if not (data_dir / "mipr_annotation.jsonl").is_file():
        make_mipr_synthetic.make(data_dir)
    runs = [work / f"run{number}.json" for number in range(entries + 1)]
    if not all(run.is_file() for run in runs):
        runs = write_runs(data_dir, work, entries + 1, 50)
    return runs


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def peak_rss(pid: int) -> float:
    """A running process's peak resident set (``VmHWM``), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--entries", type=int, default=10)
    parser.add_argument("--keep", help="write the synthetic data and the board here (default: a temporary folder)")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="mmrhub-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    runs = generate(work, args.entries)
    entries, uploaded = runs[:-1], runs[-1]
    data_dir = work / "mipr"
    mmrhub = str(Path(sys.executable).parent / "mmrhub")
    evaluate = [mmrhub, "evaluate", "mipr", "--data-dir", str(data_dir)]
    timed(evaluate + [str(uploaded)])  # the judgment cache, filled as a board's Space fills its own

    board = work / "board"
    if board.exists():
        subprocess.run(["rm", "-rf", str(board)], check=True)
    build, build_rss = timed([mmrhub, "leaderboard", "mipr", *map(str, entries), "-o", str(board), "--data-dir",
                              str(data_dir)])  # fmt: skip
    scored, scored_rss = timed(evaluate + list(map(str, entries)))
    compared, compared_rss = timed([mmrhub, "compare", "mipr", *map(str, entries), "--data-dir", str(data_dir)])
    print(
        f"| build, whole process | {len(entries)} entries |\n|---|---:|\n"
        f"| `mmrhub leaderboard` | {build:.2f} s, {build_rss:.0f} MiB |\n"
        f"| `mmrhub evaluate` of the same runs | {scored:.2f} s, {scored_rss:.0f} MiB |\n"
        f"| `mmrhub compare` of the same runs | {compared:.2f} s, {compared_rss:.0f} MiB |\n",
        flush=True,
    )

    port = free_port()
    env = {
        **USER_ENV,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONPATH": "",
    }
    started = time.perf_counter()
    space = subprocess.Popen([sys.executable, "app.py"], cwd=board, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            if space.poll() is not None:
                raise SystemExit(f"the Space stopped:\n{space.stderr.read().decode()[-3000:]}")
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                time.sleep(0.05)
        start = time.perf_counter() - started
        from gradio_client import Client
        from gradio_client import handle_file

        client = Client(url, verbose=False)
        client.predict(handle_file(str(uploaded)), "", None, api_name="/score")  # gradio's first call
        answers, evaluations, evaluate_rss = [], [], 0.0
        for _ in range(args.rounds):
            began = time.perf_counter()
            _, _, scores, _ = client.predict(handle_file(str(uploaded)), "", None, api_name="/score")
            answers.append(time.perf_counter() - began)
            assert scores["label"] == chr(ord("a") + len(entries)), scores
            seconds, rss = timed(evaluate + [str(uploaded)])
            evaluations.append(seconds)
            evaluate_rss = max(evaluate_rss, rss)
        space_rss = peak_rss(space.pid)
    finally:
        space.terminate()
        space.wait()
    answer, evaluated = statistics.median(answers), statistics.median(evaluations)
    print(
        f"| the Space (`python app.py`) | |\n|---|---:|\n| start, until its page answers | {start:.2f} s |\n\n"
        f"| upload (median of {args.rounds}, alternating) | Space's answer | `mmrhub evaluate`, whole process "
        f"| ratio |\n|---|---:|---:|---:|\n"
        f"| one top-50 run, {uploaded.stat().st_size / 2**20:.1f} MiB, against {len(entries)} entries "
        f"| {answer:.2f} s | {evaluated:.2f} s | **{answer / evaluated:.2f}** |\n"
        f"| peak RSS | {space_rss:.0f} MiB (the Space, all uploads) | {evaluate_rss:.0f} MiB "
        f"| {space_rss / evaluate_rss:.2f} |"
    )


if __name__ == "__main__":
    main()
