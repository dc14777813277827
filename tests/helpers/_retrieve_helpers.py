"""What the retrieve tests share: the MIPR sample with two more queries, ``retrieve`` in-process, a run's ranking, one
and two processes. The tiny random checkpoints they load through ``--model PATH`` are built by
``scripts/tiny_models.py`` (as ``scripts/make_tiny_models.py`` builds them)."""

import json
import shutil
import subprocess
import sys

from _mipr_helpers import read_jsonl
from _mipr_helpers import write_jsonl
from _paths import MIPR_SAMPLE

# Queries the retrieve tests add to the MIPR sample (the mipr_dir fixture): a corpus item's own image and title,
# and the first query's image with an empty question.
SELF_QUERY, IMAGE_ONLY_QUERY = "9001", "9002"


def mipr_with_self_queries(folder) -> dict:
    """A copy of the MIPR sample in ``folder`` plus SELF_QUERY and IMAGE_ONLY_QUERY, judged; what the tests need
    to know of it."""
    shutil.copytree(MIPR_SAMPLE, folder)
    corpus = read_jsonl(folder / "mipr_corpus.jsonl")
    queries = read_jsonl(folder / "mipr_query.jsonl")
    item = corpus[len(corpus) // 2]
    images = folder / "images"
    shutil.copy(images / "product_images" / item["pict_url"], images / "query_images" / "self.jpg")
    queries.append({"idx": SELF_QUERY, "query": item["title"], "image_url": "self.jpg"})
    queries.append({"idx": IMAGE_ONLY_QUERY, "query": "", "image_url": queries[0]["image_url"]})
    write_jsonl(folder / "mipr_query.jsonl", queries)
    qrels = read_jsonl(folder / "mipr_annotation.jsonl")
    qrels.append({"idx": SELF_QUERY, "items": [{"item_id": item["item_id"], "final_grade": "L1"}]})
    qrels.append({"idx": IMAGE_ONLY_QUERY, "items": [{"item_id": corpus[0]["item_id"], "final_grade": "L2"}]})
    write_jsonl(folder / "mipr_annotation.jsonl", qrels)
    return {"dir": folder, "self_item": item["item_id"], "num_queries": len(queries), "num_corpus": len(corpus)}


def retrieve(tmp_path, *options, name="run.json"):
    """``mmrhub retrieve`` in-process; the run path, parsed run and per-phase stats."""
    from mmrhub.commands.retrieve import build_parser
    from mmrhub.commands.retrieve import retrieve_options
    from mmrhub.retrieve.pipeline import run

    output, stats = tmp_path / name, tmp_path / f"{name}.stats.json"
    argv = [*map(str, options), "--output", str(output), "--stats-json", str(stats), "--num-workers", "0"]
    if run(retrieve_options(build_parser().parse_args(argv))) != 0:
        raise RuntimeError(f"retrieve {argv} did not exit 0")
    return output, json.loads(output.read_text()), json.loads(stats.read_text())


def top(run, qid):
    """Query ``qid``'s ranking in a parsed run."""
    return next(entry["ranked"] for entry in run if entry["qid"] == qid)


def one_and_two_processes(script, options: list, env: dict, tmp_path):
    """(the run one process writes, the run ``torchrun`` with two processes writes, the latter's stdout)."""
    single, double = tmp_path / "one.json", tmp_path / "two.json"
    subprocess.run(
        [sys.executable, str(script), *options, "--output", str(single)], check=True, env=env, capture_output=True
    )
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    done = subprocess.run(
        [*torchrun, str(script), *options, "--output", str(double)],
        env=env,
        capture_output=True,
        timeout=300,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return single, double, done.stdout
