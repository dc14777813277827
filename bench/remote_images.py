"""M2KR's archives read in place over HTTP against the same archives on disk: bytes moved, requests, wall time.

Synthetic M2KR (``make_m2kr_synthetic.py``: ``--passages`` screenshots of about ``--screenshot-kb`` KB split in the
three ``Web_Image.zip`` parts, ``query_images.zip``), the tables in a local folder, the archives served by the
loopback HTTP server the tests use (``tests/_range_server.py``: Range, ETag, every request and byte counted). Two
whole processes, each run once with ``--images-dir`` the local folder and once with its URL, each with a fresh
``HF_HOME`` (nothing cached: the zip directories are read as a first call reads them) and then again on that
``HF_HOME`` (warm):

- ``mmrhub report m2kr RUN --queries 20``: a run whose 20 worst queries show 20 query images and 5-8 screenshots each;
- a 1,000-image read as a user writes it: ``m2kr.load("challenge_passage", DATA, images_dir=...)``, then the first
  1,000 rows' images decoded (``Image.load``).

Printed: wall seconds (median of ``--rounds``), the server's requests and bytes sent, the bytes of the images the
process used (their members' local headers and data), and what the process left under ``HF_HOME``.

    python bench/remote_images.py [--passages 1200] [--screenshot-kb 300] [--rounds 3] [--work DIR] [--source DIR]

``--source``: also run the HTTP case with the code of another checkout (e.g. ``git archive`` of the commit before
the range reader), online for ``datasets`` (which downloads nothing offline), as a user would run it.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT)]
import make_m2kr_synthetic  # noqa: E402
from _range_server import RangeServer  # noqa: E402

SHOWN = 20
READ = 1_000
READ_SCRIPT = """
import sys
import m2kr
rows = m2kr.load("challenge_passage", data_dir=sys.argv[1], images_dir=sys.argv[2]).select(range(int(sys.argv[3])))
pixels = 0
for image in rows["image"]:
    image.load()
    pixels += image.width * image.height
print(pixels)
"""


def prepare(work: Path, passages: int, queries: int, screenshot_kb: int) -> tuple:
    """(tables folder, archives folder, a run file whose 20 worst queries are the first 20)."""
    made = make_m2kr_synthetic.make(work / "data", queries=queries, passages=passages, screenshot_kb=screenshot_kb)
    served = work / "served" / "images"
    served.mkdir(parents=True)
    for part in (*make_m2kr_synthetic.WEB_PARTS, "query_images.zip"):
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


def member_bytes(served: Path, names: set) -> int:
    """Bytes of these members' spans (local header and data) in the served archives."""
    import fsspec

    import m2kr
    import m2kr_archive

    total = 0
    for parts in m2kr.ARCHIVES.values():
        paths = [str(served / part) for part in parts]
        with m2kr_archive.open_parts(fsspec.filesystem("file"), paths) as joined:
            archive = m2kr_archive.open_zip(joined, paths)
            infos = sorted(archive.infolist(), key=lambda info: info.header_offset)
            ends = [info.header_offset for info in infos[1:]] + [archive.start_dir]
            total += sum(end - info.header_offset for info, end in zip(infos, ends) if info.filename in names)
    return total


def used_members(data: Path, run: Path) -> tuple:
    """(the members the report shows, the members of the first READ passages)."""
    import pyarrow.parquet as pq

    table = "train-00000-of-00001.parquet"
    queries = pq.read_table(data / "challenge_data" / table).to_pylist()
    passages = pq.read_table(data / "challenge_passage" / table).to_pylist()
    answers = {
        row["question_id"]: row["pos_item_ids"] for row in pq.read_table(data / "challenge_answers" / table).to_pylist()
    }
    screenshot = {row["passage_id"]: f"Web_Image/{row['page_screenshot']}" for row in passages}
    shown = json.loads(run.read_text())[:SHOWN]
    report = {f"query_images/{row['img_path']}" for row in queries if row["question_id"] in {e["qid"] for e in shown}}
    report |= {screenshot[r["did"]] for entry in shown for r in entry["ranked"]}
    report |= {screenshot[pid] for entry in shown for pid in answers[entry["qid"]]}
    return report, {screenshot[row["passage_id"]] for row in passages[:READ]}


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder``."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def timed(command: list, hf_home: Path, source=None) -> float:
    """Seconds of one whole process, which must succeed (``source``: with that checkout's code, online)."""
    env = dict(os.environ, HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    env.pop("HF_DATASETS_CACHE", None)
    env["PYTHONPATH"] = str(source or ROOT)  # this checkout's code, as run from it
    if source:
        env["HF_DATASETS_OFFLINE"] = "0"
    started = time.perf_counter()
    # run from HF_HOME's parent: from this checkout, "-m" and "-c" would import its modules before PYTHONPATH's
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=hf_home.parent)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return seconds


def measure(name: str, command, server: RangeServer, scratch: Path, rounds: int, source=None) -> dict:
    """Cold (fresh HF_HOME) and warm (the same one again) rounds of ``command(images_dir)``, local then HTTP (then
    HTTP with ``source``'s code)."""
    rows = {}
    cases = [("local", str(server.root / "images"), None), ("http", server.file_url("images"), None)]
    cases += [("http, before", server.file_url("images"), source)] if source else []
    for where, images_dir, code in cases:
        for state in ("cold", "warm"):
            seconds, moved, requests = [], [], []
            for round_ in range(rounds):
                hf_home = scratch / f"hf-{name}-{where.replace(', ', '-')}-{round_}"
                if state == "cold":
                    shutil.rmtree(hf_home, ignore_errors=True)
                    hf_home.mkdir()
                server.reset()
                seconds.append(timed(command(images_dir), hf_home, code))
                moved.append(server.sent("/images/"))
                requests.append(len(server.gets("/images/")))
                left = folder_bytes(hf_home)
            rows[where, state] = {
                "seconds": statistics.median(seconds),
                "moved": statistics.median(moved),
                "requests": statistics.median(requests),
                "hf_home": left,
            }
    return rows


def show(name: str, rows: dict, archives: int, used: int) -> None:
    print(f"\n{name}  (archives: {archives / 1e6:,.1f} MB; the images used: {used / 1e6:,.2f} MB)")
    print("| images | HF_HOME | wall s | requests | MB moved | MB left in HF_HOME |")
    print("|---|---|---:|---:|---:|---:|")
    for (where, state), row in rows.items():
        print(
            f"| {where} | {state} | {row['seconds']:.2f} | {row['requests']:.0f} | {row['moved'] / 1e6:,.2f} | "
            f"{row['hf_home'] / 1e6:,.1f} |"
        )
    for state in ("cold", "warm"):
        ratio = rows["http", state]["seconds"] / rows["local", state]["seconds"]
        print(f"http / local wall time, {state}: {ratio:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--screenshot-kb", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, help="a new or empty folder to keep (default: a temporary one)")
    parser.add_argument("--source", type=Path, help="also time the HTTP case with this checkout's code")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = (args.work or Path(temporary)).resolve()
        data, served, run = prepare(work, args.passages, args.queries, args.screenshot_kb)
        archives = folder_bytes(served)
        with RangeServer(served.parent) as server:
            mmrhub = [sys.executable, "-m", "mmrhub.cli", "report", "m2kr", str(run), "--data-dir", str(data)]

            def report(images_dir):
                return [*mmrhub, "--images-dir", images_dir, "--queries", str(SHOWN), "-o", str(work / "page.html")]

            def read(images_dir):
                return [sys.executable, "-c", READ_SCRIPT, str(data), images_dir, str(READ)]

            shown, first = (member_bytes(served, names) for names in used_members(data, run))
            rows = measure("report", report, server, work, args.rounds, args.source)
            show(f"mmrhub report m2kr RUN --queries {SHOWN}", rows, archives, shown)
            rows = measure("read", read, server, work, args.rounds, args.source)
            show(f"{READ:,}-image read (m2kr.load + decode)", rows, archives, first)


if __name__ == "__main__":
    main()
