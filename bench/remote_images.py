"""M2KR's archives read in place from a far server, over an emulated link: each whole process against a parallel
download of the parts over the same link, with requests, bytes and requests in flight from the server's own log.

Synthetic M2KR (``make_m2kr_synthetic.py``: ``--passages`` screenshots of about ``--screenshot-kb`` KB in the three
``Web_Image.zip`` parts, ``query_images.zip``), the tables in a local folder, the archives served by the loopback server
the tests use (``tests/helpers/_range_server.py``) over ``http://`` and as a Hub repo whose ``resolve`` redirects to
expiring CDN URLs (``hf://``). The server emulates the link: each request waits ``--delays`` ms before it is answered (a
round trip), and every answer's body shares ``--link-mbps`` (a token bucket). For each delay and each of http and the
Hub, whole processes with a fresh ``HF_HOME``:

- ``download``: the four archives downloaded whole, all at once (a thread each, as ``hf download`` would; the Hub's
  redirect followed): the peer every full pass is measured against;
- ``export``: ``mmrhub export m2kr OUT --images-dir URL`` (a full pass: every member of every archive);
- ``loop``: the documented loop, ``for row in m2kr.read_ahead(m2kr.load("challenge_passage", ...))`` (a full pass of
  the screenshots, each decoded);
- ``feed``: retrieve's feed, the corpus side's ``Items`` through a ``DataLoader`` (2 workers, batches of 32) as
  ``mmrhub retrieve`` runs it, images decoded, without a model (a full pass of the screenshots);
- ``report`` cold and warm: ``mmrhub report m2kr RUN --queries 20`` on a fresh ``HF_HOME``, then again on it;
- ``plain``: the first ``--plain-rows`` rows decoded one by one (``for row in dataset``), what a loop without
  ``read_ahead`` does;
- at 0 ms over http, ``stall``: a server that sends 10 bytes of each range answer and then nothing, read with
  ``read_timeout=5``: the process's time and last line.

Printed per case (medians of ``--rounds``): the whole process's seconds and its pass's (from after its imports to
the end of its work, which the download it is measured against has no interpreter to start either), the pass's ratio
to the download's time in the same run (target for the full passes at 100 ms: at most 1.3), requests to the archives
(GETs, and the Hub's redirects), MB moved against the members' spans plus the zip directories it read, mean and most
requests in flight (the server's log: its requests' durations over the span from the first to the last; the most
open at once).

    python bench/remote_images.py [--passages 1200] [--screenshot-kb 300] [--delays 0,50,100,200] [--link-mbps 100]
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
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "helpers"), str(ROOT)]
import make_m2kr_synthetic  # noqa: E402
from _range_server import RangeServer  # noqa: E402
from _remote_m2kr import Archive  # noqa: E402

import m2kr  # noqa: E402

HUB_REPO = "Jingbiao/M2KR-Challenge"
SHOWN = 20
HEADER = (
    "| case | process s | pass s | x download | GETs | redirects | MB moved | x spans+dir | in flight mean / most |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)
ARCHIVE_NAMES = tuple(part for parts in m2kr.ARCHIVES.values() for part in parts)
# Each process prints, last, the seconds its work took once its modules were imported ("pass"), beside the whole
# process's wall time: the download it is measured against starts no interpreter either.
LOOP_SCRIPT = """
import sys, time
import m2kr
started = time.perf_counter()
rows = m2kr.load("challenge_passage", data_dir=sys.argv[1], images_dir=sys.argv[2])
count = sum(row["image"].width > 0 for row in m2kr.read_ahead(rows))
print(time.perf_counter() - started)
"""
PLAIN_SCRIPT = """
import sys, time
import m2kr
started = time.perf_counter()
rows = m2kr.load("challenge_passage", data_dir=sys.argv[1], images_dir=sys.argv[2]).select(range(int(sys.argv[3])))
count = sum(row["image"].width > 0 for row in rows)
print(time.perf_counter() - started)
"""
FEED_SCRIPT = """
import sys, time
from mmrhub.benchmarks import BENCHMARKS
from mmrhub.retrieve.data_loading import Items, load_side, loader
from mmrhub.retrieve.options import DataOptions
started = time.perf_counter()
side = load_side(DataOptions(BENCHMARKS["m2kr"], sys.argv[1], None, sys.argv[2]), "corpus")
batches = loader(Items(side.dataset, side.table), list, 32, 2, False)
count = sum(sum(row.image.width > 0 for row in batch) for batch in batches)
print(time.perf_counter() - started)
"""
COMMAND_SCRIPT = """
import sys, time
from mmrhub.cli import build_parser, main
import datasets, m2kr, pyarrow.parquet, PIL.Image, matplotlib.pyplot
build_parser()  # every command's modules imported
started = time.perf_counter()
assert main(sys.argv[1:]) == 0
print(time.perf_counter() - started)
"""
STALL_SCRIPT = """
import sys
import m2kr
rows = m2kr.load("challenge_passage", data_dir=sys.argv[1], images_dir=sys.argv[2], read_timeout=5)
rows[7]["image"]
"""


def prepare(work: Path, passages: int, queries: int, screenshot_kb: int) -> tuple:
    """(tables folder, archives folder, a run file whose 20 worst queries are the first 20)."""
    made = make_m2kr_synthetic.make(work / "data", queries=queries, passages=passages, screenshot_kb=screenshot_kb)
    served = work / "served" / "images"
    served.mkdir(parents=True)
    for part in ARCHIVE_NAMES:
        (made / part).rename(served / part)
    import pyarrow.parquet as pq

    answers = pq.read_table(made / "challenge_answers" / "train-00000-of-00001.parquet").to_pylist()
    passage_ids = pq.read_table(made / "challenge_passage" / "train-00000-of-00001.parquet")["passage_id"].to_pylist()
    entries = []
    for index, row in enumerate(answers):
        others = [pid for pid in passage_ids[index * 5 :] + passage_ids[: index * 5] if pid not in row["pos_item_ids"]]
        ranked = others[:5] if index < SHOWN else (row["pos_item_ids"] + others)[:5]
        entries.append(
            {"qid": row["question_id"], "ranked": [{"did": d, "score": 5.0 - r} for r, d in enumerate(ranked)]}
        )
    run = work / "run.json"
    run.write_text(json.dumps(entries))
    return made, served, run


def environment(hf_home: Path, server: RangeServer, where: str) -> dict:
    """A process's environment: this checkout's code, its own HF_HOME, the Hub at the server (for hf://)."""
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", PYTHONPATH=str(ROOT))
    env.pop("HF_DATASETS_CACHE", None)
    if where == "hub":
        env.update(HF_HUB_OFFLINE="0", HF_ENDPOINT=server.url)
    return env


def run(command: list, env: dict, cwd: Path, fail_ok: bool = False) -> tuple:
    """(seconds of the whole process, seconds of its pass, its last stderr line) of one process, which must succeed
    unless ``fail_ok``."""
    started = time.perf_counter()
    # from a folder outside the checkout: "-m" and "-c" would import its modules before PYTHONPATH's
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=cwd)
    seconds = time.perf_counter() - started
    if done.returncode and not fail_ok:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{done.stderr[-3000:]}")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    output = done.stdout.split()
    return seconds, float(output[-1]) if output and not done.returncode else None, lines[-1] if lines else ""


def download_all(server: RangeServer, where: str, scratch: Path) -> float:
    """Seconds to download the four archives whole, all at once (the Hub's redirect followed)."""
    sha = server.repos[HUB_REPO][1] if where == "hub" else None

    def one(part: str) -> int:
        url = (
            f"{server.url}/datasets/{HUB_REPO}/resolve/{sha}/{part}"
            if where == "hub"
            else server.file_url(f"images/{part}")
        )
        with urllib.request.urlopen(url) as answer, open(scratch / part, "wb") as out:
            shutil.copyfileobj(answer, out, 1 << 20)
        return (scratch / part).stat().st_size

    started = time.perf_counter()
    with ThreadPoolExecutor(len(ARCHIVE_NAMES)) as pool:
        sizes = list(pool.map(one, ARCHIVE_NAMES))
    seconds = time.perf_counter() - started
    for part in ARCHIVE_NAMES:
        (scratch / part).unlink()
    assert sum(sizes) == sum((server.root / "images" / part).stat().st_size for part in ARCHIVE_NAMES)
    return seconds


def logged(server: RangeServer, archives: dict) -> dict:
    """What the server's log says of the archives: requests (GETs and the Hub's redirects), bytes, members touched,
    the directories' bytes read, and requests in flight."""
    gets = [r for r in server.requests if r.method == "GET" and r.path.rsplit("/", 1)[-1] in ARCHIVE_NAMES]
    redirects = [r for r in server.requests if r.status == 302 and r.path.rsplit("/", 1)[-1] in ARCHIVE_NAMES]
    touched, directory = {}, 0
    for config, archive in archives.items():
        members, read = archive.read(server.requests)
        touched[config] = members
        directory += sum(size for _, size in read)
    spans = sum(archive.member_bytes(touched[config]) for config, archive in archives.items())
    return {
        "gets": len(gets),
        "redirects": len(redirects),
        "moved": sum(r.sent for r in gets),
        "spans": spans + directory,
        "members": sum(map(len, touched.values())),
        "mean": max(server.mean_in_flight(name) for name in ("Web_Image.zip", "query_images.zip")),
        "most": max(server.max_in_flight(name) for name in ("Web_Image.zip", "query_images.zip")),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--screenshot-kb", type=int, default=300)
    parser.add_argument("--delays", default="0,50,100,200", help="ms each request waits, comma-separated")
    parser.add_argument("--link-mbps", type=float, default=100.0, help="the emulated link, Mbit/s")
    parser.add_argument("--where", default="http,hub")
    parser.add_argument("--plain-rows", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--work", type=Path, help="a new or empty folder to keep (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = (args.work or Path(temporary)).resolve()
        data, served, run_file = prepare(work, args.passages, args.queries, args.screenshot_kb)
        archives = {config: Archive(served, parts) for config, parts in m2kr.ARCHIVES.items()}
        total = sum((served / part).stat().st_size for part in ARCHIVE_NAMES)
        print(
            f"{args.passages:,} screenshots of about {args.screenshot_kb} KB and {args.queries} query images: "
            f"{total / 1e6:,.1f} MB of archives; link {args.link_mbps:g} Mbit/s; {args.rounds} round(s)"
        )
        with RangeServer(served.parent) as server:
            server.add_repo(HUB_REPO, served)
            server.rate = args.link_mbps * 1e6 / 8
            cli = [sys.executable, "-c", COMMAND_SCRIPT]
            for where in args.where.split(","):
                url = f"hf://datasets/{HUB_REPO}" if where == "hub" else server.file_url("images")
                report = [*cli, "report", "m2kr", str(run_file), "--data-dir", str(data), "--images-dir", url]
                report += ["--queries", str(SHOWN), "-o", str(work / "page.html")]
                cases = {
                    "export": lambda out: [
                        *cli,
                        "export",
                        "m2kr",
                        str(out),
                        "--data-dir",
                        str(data),
                        "--images-dir",
                        url,
                    ],
                    "loop": lambda out: [sys.executable, "-c", LOOP_SCRIPT, str(data), url],
                    "feed": lambda out: [sys.executable, "-c", FEED_SCRIPT, str(data), url],
                    "report cold": lambda out: report,
                    "report warm": lambda out: report,
                    "plain": lambda out: [sys.executable, "-c", PLAIN_SCRIPT, str(data), url, str(args.plain_rows)],
                }
                for delay in [float(ms) / 1000 for ms in args.delays.split(",")]:
                    server.delay = delay
                    print(f"\n{where}, {delay * 1000:g} ms a request, {args.link_mbps:g} Mbit/s")
                    print(HEADER)
                    download = statistics.median(download_all(server, where, work) for _ in range(args.rounds))
                    print(
                        f"| download the 4 archives at once | | {download:.2f} | 1.00 | 4 | | {total / 1e6:,.1f} | | |"
                    )
                    for name, command in cases.items():
                        seconds, passes, figures = [], [], None
                        for round_ in range(args.rounds):
                            hf_home = work / f"hf-{where}-{delay}-{round_}"
                            if name != "report warm":
                                shutil.rmtree(hf_home, ignore_errors=True)
                                hf_home.mkdir()
                            out = work / f"out-{where}-{delay}-{round_}"
                            shutil.rmtree(out, ignore_errors=True)
                            server.reset()
                            whole, work_seconds, _ = run(command(out), environment(hf_home, server, where), work)
                            seconds.append(whole)
                            passes.append(work_seconds)
                            figures = logged(server, archives)
                        wall, done = statistics.median(seconds), statistics.median(passes)
                        full = name in ("export", "loop", "feed")
                        print(
                            f"| {name} | {wall:.2f} | {done:.2f} | {done / download:.2f}{'' if full else ' (part)'} | "
                            f"{figures['gets']:,} | {figures['redirects']} | {figures['moved'] / 1e6:,.2f} | "
                            f"{figures['moved'] / figures['spans'] if figures['spans'] else 0:.4f} | "
                            f"{figures['mean']:.1f} / {figures['most']} |"
                        )
                    if where == "http" and delay == 0:
                        server.stall_after = 10
                        hf_home = work / "hf-stall"
                        seconds, _, line = run(
                            [sys.executable, "-c", STALL_SCRIPT, str(data), url],
                            environment(hf_home, server, where),
                            work,
                            fail_ok=True,
                        )
                        server.stall_after = None
                        print(f"\nstalled server, read_timeout=5: ended after {seconds:.1f} s with: {line}")


if __name__ == "__main__":
    main()
