"""The reranker's two paths side by side: each (query, candidate) pair run whole, or each query's prefix run once for
all its candidates (``mmrhub/retrieve/rerank/shared_inputs.py``, ``shared_forward.py``).

1. Work counted on the real layouts (``bench/flop_model.py``): per pair, the language-model tokens and the vision
   patches each path runs, with MIPR's 800x800 photos and M2KR's 1024x2000 screenshots with ~500-token passages
   (images through the processor's resize; text tokens estimated, the real tokeniser being out of reach offline);
   their ratio, and the FLOP model's pairs/s on one H200 for both paths (estimates, not measurements).
2. ``--cpu``: the tiny random Qwen3-VL reranker of the real layout (``scripts/tiny_models.py``) on generated pairs of
   those shapes with full-size images, both paths timed in the same process, alternating, median of ``--rounds``:
   per pair, the inputs' preparation (the workers' share: resize, the processor) and the model's forward, and
   the tokens and patches the two paths actually ran (text tokenised byte by byte: the tiny tokeniser has no
   merges). The tiny model's forward costs little beside the preparation, so these ratios say what the workers
   save, not what a GPU saves. Needs torchvision (the Qwen3-VL environment).

    python bench/shared_prefix.py                      # the counts and the FLOP model's rates
    python bench/shared_prefix.py --cpu [--queries 2] [--candidates 50] [--rounds 3] [--json OUT]
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "scripts")]
sys.path.append(str(HERE.parent))  # last: an installed mmrhub comes first
import flop_model  # noqa: E402

M2KR_INSTRUCTION = "Using the provided image, obtain documents that address the subsequent question: "


def counted() -> dict:
    """Per kind: each path's tokens and patches a pair, and the FLOP model's pairs/s on one H200 for both."""
    out = {}
    for kind in flop_model.RERANK_IMAGES:
        work = flop_model.rerank_work(kind)
        rates = {
            size: {
                path.strip() or "whole": cost.per_second() for path, cost in flop_model.rerank_costs(size, kind).items()
            }
            for size in ("2b", "8b")
        }
        out[kind] = {**work, "h200 pairs/s (FLOP model)": rates}
    return out


def print_counts(counts: dict) -> None:
    print(f"Work a reranked pair costs on the real layouts ({flop_model.RERANK_CANDIDATES} candidates a query):")
    print("| pair | LM tokens whole -> shared | ratio | vision patches whole -> shared | ratio |")
    print("|---|---:|---:|---:|---:|")
    for kind, work in counts.items():
        whole, shared = work["whole"], work["shared"]
        print(
            f"| {kind} | {whole['tokens']:,} -> {shared['tokens']:,.1f} | {shared['tokens'] / whole['tokens']:.3f} "
            f"| {whole['patches']:,} -> {shared['patches']:,.0f} | {shared['patches'] / whole['patches']:.3f} |"
        )
    print(f"\nThe FLOP model's pairs/s on one H200 ({flop_model.SUSTAINED_TFLOPS:.0f} TFLOP/s bf16; estimates):")
    print("| reranker, pair | whole | shared | ratio |\n|---|---:|---:|---:|")
    for kind, work in counts.items():
        for size, rates in work["h200 pairs/s (FLOP model)"].items():
            ratio = rates["shared"] / rates["whole"]
            print(f"| {size}, {kind} | {rates['whole']:.1f} | {rates['shared']:.1f} | {ratio:.2f} |")


class Table:
    """Decoded rows as ``Items`` hands them to the rerank's batches."""

    def __init__(self, rows):
        self.rows = rows

    def __getitems__(self, indices):
        return [self.rows[i] for i in indices]


def generated(kind: str, queries: int, candidates: int):
    """(query Table, candidate Table) of ``kind``-shaped rows: MIPR photos with Chinese questions and titles (15-45
    characters), or photo queries (each with M2KR's instruction, half with a question) and 1024x2000 screenshots
    with passages of 60-140 words (~360-840 characters, a token each here, ~500 tokens as with the real
    tokeniser)."""
    from feed_cpu import photo
    from feed_cpu import screenshot
    from PIL import Image

    from mmrhub.retrieve.data_loading import Row

    rng = np.random.default_rng(0)
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    query_image, document_image = (flop_model.IMAGES[name] for name in flop_model.RERANK_IMAGES[kind])
    query_rows, documents = [], []
    for i in range(queries):
        image = Image.fromarray(photo(rng, *query_image))
        if kind == "mipr":
            query_rows.append(Row(f"q{i}", "".join(rng.choice(cjk, 12)), image))
        else:
            query_rows.append(Row(f"q{i}", "what is this building" if i % 2 else None, image, M2KR_INSTRUCTION))
    for i in range(candidates):  # texts of varied lengths, so that batches are padded as real ones are
        if kind == "mipr":
            title = "".join(rng.choice(cjk, rng.integers(15, 46)))
            documents.append(Row(f"d{i}", title, Image.fromarray(photo(rng, *document_image))))
        else:
            words = ["".join(rng.choice(list("abcdefghij"), rng.integers(2, 9))) for _ in range(rng.integers(60, 140))]
            image = Image.fromarray(screenshot(rng, *document_image))
            documents.append(Row(f"d{i}", " ".join(words), image))
    return Table(query_rows), Table(documents)


def one_round(reranker, queries, documents, candidates: int, batch_size: int) -> dict:
    """Seconds preparing inputs and running the model, and the tokens and patches the model ran, for every pair."""
    from mmrhub.retrieve.rerank.model import PairBatches
    from mmrhub.retrieve.rerank.shared_inputs import SharedBatch

    pairs = [(q, c) for q in range(len(queries.rows)) for c in range(candidates)]
    work = [(q, pairs[q * candidates : (q + 1) * candidates], [0] * candidates) for q in range(len(queries.rows))]
    batches = iter(PairBatches(queries, documents, work, reranker, batch_size))
    inputs = model = 0.0
    tokens = patches = scored = 0
    while True:
        started = time.perf_counter()
        made = next(batches, None)
        inputs += time.perf_counter() - started
        if made is None:
            break
        _, positions, batch, _ = made
        started = time.perf_counter()
        reranker.score(batch)
        model += time.perf_counter() - started
        parts = [batch.prefix, batch.suffix] if isinstance(batch, SharedBatch) else [batch]
        for features in filter(None, parts):
            tokens += int(features["attention_mask"].sum())
            patches += len(features["pixel_values"])
        scored += len(positions)
    return {"inputs": inputs / scored, "model": model / scored, "tokens": tokens / scored, "patches": patches / scored}


def timed_cpu(args) -> dict:
    """Both paths on the tiny real-layout reranker, alternating rounds, per kind: medians a pair."""
    import torch
    from tiny_models import build_tiny_qwen3_vl_reranker

    from mmrhub.retrieve.options import ModelSettings
    from mmrhub.retrieve.rerank.model import Reranker

    torch.set_num_threads(1)
    models = Path(tempfile.mkdtemp())  # the folder's own name gives the preset
    folder = build_tiny_qwen3_vl_reranker(models / "build").rename(models / "Qwen3-VL-Reranker-tiny")
    settings = ModelSettings().resolve(str(folder), "reranker")
    rerankers = {path: Reranker(str(folder), settings, shared_prefix=path == "shared") for path in ("whole", "shared")}
    out = {}
    for kind in args.kinds.split(","):
        queries, documents = generated(kind, args.queries, args.candidates)
        rounds = {path: [] for path in rerankers}
        for number in range(args.rounds):
            order = list(rerankers) if number % 2 == 0 else list(rerankers)[::-1]
            for path in order:
                rounds[path].append(one_round(rerankers[path], queries, documents, args.candidates, args.batch_size))
        out[kind] = {
            path: {key: statistics.median(r[key] for r in results) for key in results[0]}
            for path, results in rounds.items()
        }
        for path, results in rounds.items():  # the rounds' spread of the timings
            for key in ("inputs", "model"):
                out[kind][path][f"{key} range"] = [min(r[key] for r in results), max(r[key] for r in results)]
    return out


def print_cpu(timings: dict, args) -> None:
    print(
        f"\nOn CPU, the tiny Qwen3-VL reranker (real layout, one thread), {args.queries} queries x {args.candidates} "
        f"candidates, batch {args.batch_size}, median (range) of {args.rounds} alternating rounds, a pair:"
    )
    print("| pair | inputs whole -> shared | ratio | model whole -> shared | ratio | tokens ratio | patches ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, paths in timings.items():
        whole, shared = paths["whole"], paths["shared"]

        def ratio(key):
            return shared[key] / whole[key]

        def ms(path, key):
            low, high = path[f"{key} range"]
            return f"{path[key] * 1e3:.1f} ({low * 1e3:.1f}-{high * 1e3:.1f})"

        print(
            f"| {kind} | {ms(whole, 'inputs')} -> {ms(shared, 'inputs')} ms | {ratio('inputs'):.2f} "
            f"| {ms(whole, 'model')} -> {ms(shared, 'model')} ms | {ratio('model'):.2f} "
            f"| {whole['tokens']:,.0f} -> {shared['tokens']:,.0f}: {ratio('tokens'):.3f} "
            f"| {whole['patches']:,.0f} -> {shared['patches']:,.0f}: {ratio('patches'):.3f} |"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true", help="also time both paths on the tiny model on CPU")
    parser.add_argument("--kinds", default="mipr,m2kr")
    parser.add_argument("--queries", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=flop_model.RERANK_CANDIDATES)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    record = {"counted": counted()}
    print_counts(record["counted"])
    if args.cpu:
        record["cpu"] = timed_cpu(args)
        print_cpu(record["cpu"], args)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
