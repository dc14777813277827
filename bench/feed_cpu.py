"""How fast the CPU feeds the model, whole process on CPU: the real embedding pipeline (``Items``, the DataLoader, the
encoder's collate in the workers, ``encode``) over full-size images, with a tiny random checkpoint of the real layout
(Qwen3-VL where torchvision is installed, else Chinese-CLIP at its real 224-pixel input).

Two kinds of items, generated: MIPR-like (an 800x800 JPEG photo and a Chinese title) and M2KR-like (a 1024x1400 PNG
screenshot and a 300-word passage). For each worker count it measures, from ``resource.getrusage`` of this process
(``RUSAGE_SELF``) and of its joined workers (``RUSAGE_CHILDREN``):

  - items/s per worker core: items / the workers' CPU seconds (what one core prepares);
  - the main process's CPU per item, and its share of all the CPU an item costs (the goal: under 10%, so that
    feeding grows with the cores). Without ``--forward`` the main process does what it does on a GPU host but
    the model's work: it receives each batch and copies every tensor once (the pinned-memory copy a CUDA run
    makes, into blocks reused as torch's caching host allocator reuses them: ``HostBuffers``; torch without CUDA
    cannot pin). The workers send what they send to a bfloat16 model on CUDA (``model_inputs.Compact``: one
    frame of Qwen-VL's two, as the image's bytes; ``--transfer cpu``: float32, both frames, as on CPU). With
    ``--forward`` the tiny model runs too (single-threaded; float32, whole pixel values).
``--before`` also measures the previous split (workers decode and resize only; the processor and tokeniser run in
the main process) for comparison. Then the feed a 16-core host sustains, set beside the GPU's estimated appetite.

    python bench/feed_cpu.py [--items 64] [--workers 1,2] [--batch-size 16] [--kinds mipr,m2kr] [--before]
    python bench/feed_cpu.py --paired OLD_CHECKOUT [--rounds 2] [...]   # OLD_CHECKOUT: e.g. `git archive` of a commit
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[1]))  # last: an installed mmrhub (gpu_check.sh) comes first
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # tiny_models: the tiny checkpoint builders

import flop_model  # noqa: E402

# What one H200 consumes with Qwen3-VL-Embedding-2B in bf16, by bench/flop_model.py, for this bench's items: an
# 800x800 photo and a title, a 1024x1400 screenshot (1,408 image tokens) and a 300-word passage (~400 tokens).
GPU_ITEMS_PER_S = {
    "mipr": round(flop_model.qwen_embed("2b", (800, 800), flop_model.TEXT_TOKENS["mipr corpus"]).per_second()),
    "m2kr": round(flop_model.qwen_embed("2b", (1024, 1400), 20 + 400).per_second()),
}
HOST_CORES = 16


def photo(rng, width=800, height=None):
    """A photo-like JPEG source: smooth colour fields and noise (JPEG decoding cost of a real product photo)."""
    height = height or width
    small = rng.integers(0, 256, (max(2, height // 50), max(2, width // 50), 3), dtype=np.uint8)
    from PIL import Image

    base = np.asarray(Image.fromarray(small).resize((width, height), Image.Resampling.BICUBIC), dtype=np.int16)
    return np.clip(base + rng.integers(-12, 13, base.shape), 0, 255).astype(np.uint8)


def screenshot(rng, width=1024, height=1400):
    """A web-page-like PNG source: white page, coloured blocks, lines of dark "text" strokes."""
    page = np.full((height, width, 3), 255, dtype=np.uint8)
    for _ in range(12):
        y, x = rng.integers(0, height - 200), rng.integers(0, width - 300)
        page[y : y + rng.integers(40, 200), x : x + rng.integers(100, 300)] = rng.integers(0, 256, 3)
    for line in range(60, height - 40, 22):
        for word in range(rng.integers(5, 14)):
            x = 40 + word * 70 + rng.integers(0, 10)
            page[line : line + 12, x : x + rng.integers(20, 60)] = rng.integers(0, 90)
    return page


def write_data(folder: Path, kind: str, count: int) -> None:
    """A MIPR-shaped folder (three JSON Lines files, images/) holding ``count`` corpus items of ``kind``."""
    from PIL import Image

    rng = np.random.default_rng(0)
    images = folder / "images" / "product_images"
    images.mkdir(parents=True)
    (folder / "images" / "query_images").mkdir()
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    corpus = []
    for i in range(count):
        if kind == "mipr":
            name = f"p{i}.jpg"
            Image.fromarray(photo(rng)).save(images / name, quality=90)
            text = "".join(rng.choice(chars, 30))
        else:
            name = f"p{i}.png"
            Image.fromarray(screenshot(rng)).save(images / name)
            text = " ".join("".join(rng.choice(list("abcdefghij"), 6)) for _ in range(300))
        corpus.append({"item_id": f"p{i}", "title": text, "pict_url": name, "treecate_full_path": "a-b"})
    Image.fromarray(photo(rng, 64)).save(folder / "images" / "query_images" / "q.jpg")
    lines = lambda rows: "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)  # noqa: E731
    (folder / "mipr_corpus.jsonl").write_text(lines(corpus), encoding="utf-8")
    (folder / "mipr_query.jsonl").write_text(lines([{"idx": "1", "query": "q", "image_url": "q.jpg"}]))
    (folder / "mipr_annotation.jsonl").write_text(
        lines([{"idx": "1", "items": [{"item_id": "p0", "final_grade": "L1"}]}])
    )


def tiny_model(folder: Path):
    """(backend, model folder, preset) of the tiny real-layout checkpoint this environment can run."""
    from tiny_models import build_qwen3_vl_embedding
    from tiny_models import build_tiny_chinese_clip
    from tiny_models import has_torchvision

    if has_torchvision():
        return "sentence-transformers", build_qwen3_vl_embedding(folder / "qwen"), "qwen3-vl-embedding"
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)] + list("abcdefghij")
    clip = build_tiny_chinese_clip(folder / "clip", ["".join(chars)], image_size=224, patch_size=32)
    return "transformers", clip, "chinese-clip"


def tensors(value):
    """Every tensor in a collated batch."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict) or hasattr(value, "items"):
        for item in value.values():
            yield from tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from tensors(item)


class Before:
    """The previous split, for comparison: workers decode and prepare images; the processor runs in ``encode``."""

    def __init__(self, encoder, role):
        self.encoder, self.role = encoder, role

    def __call__(self, rows):
        return [row._replace(image=self.encoder.prepare_image(row.id, row.image)) for row in rows]


class HostBuffers:
    """The copy of each batch into pinned memory a CUDA run makes (``pin_memory``), as torch's caching host allocator
    makes it: each tensor into a block of its size rounded up to a power of two, taken from the blocks freed
    before (a batch's are freed once it has been used), so that after the first batches no fresh pages are
    touched. torch without CUDA cannot pin; the copy is the same."""

    def __init__(self):
        self.free = {}

    def copy(self, batch_tensors) -> None:
        import torch

        used = []
        for tensor in batch_tensors:
            size = tensor.numel() * tensor.element_size()
            rounded = 1 << max(size - 1, 0).bit_length()
            blocks = self.free.setdefault(rounded, [])
            block = blocks.pop() if blocks else torch.empty(rounded, dtype=torch.uint8)
            block[:size].view(tensor.dtype).view(tensor.shape).copy_(tensor)
            used.append((rounded, block))
        for rounded, block in used:
            self.free[rounded].append(block)


def measure(encoder, items, role, workers: int, batch_size: int, forward: bool, before: bool) -> dict:
    """One pass over ``items``: wall seconds, this process's CPU seconds (all its threads; less the model's own with
    ``forward``), the workers' CPU seconds."""

    from mmrhub.retrieve.data_loading import loader

    collate = Before(encoder, role) if before else encoder.collate(role)
    host = HostBuffers()
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, model_cpu, count = time.perf_counter(), 0.0, 0
    for batch in loader(items, collate, batch_size, workers, pin_memory=False):
        if before:
            batch = encoder.prepare(batch, role)  # the processor and tokeniser, here in the main process
        if forward:
            tick = time.thread_time()
            encoder.encode(batch, role)
            model_cpu += time.thread_time() - tick
        else:
            host.copy(tensors(batch))  # the one copy a CUDA run makes of each tensor (pinned memory)
        count += len(batch["ids"])
    wall = time.perf_counter() - started
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = lambda a, b: (b.ru_utime - a.ru_utime) + (b.ru_stime - a.ru_stime)  # noqa: E731
    return {
        "items": count,
        "wall": wall,
        "main": cpu(self_before, self_after) - model_cpu,
        "model": model_cpu,
        "workers": cpu(children_before, children_after),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=64, help="items of each kind (default 64)")
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--kinds", default="mipr,m2kr")
    parser.add_argument("--forward", action="store_true", help="run the tiny model too (single-threaded)")
    parser.add_argument("--before", action="store_true", help="also measure the previous split")
    parser.add_argument(
        "--transfer", choices=("gpu", "cpu"), default="gpu", help="what the workers send: as to a bf16 CUDA model"
    )
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--source", help="measure the mmrhub of this checkout (e.g. `git archive` of a commit)")
    parser.add_argument(
        "--paired", metavar="OLD_SOURCE", help="measure OLD_SOURCE and this checkout in alternating child processes"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each side with --paired (default 2)")
    args = parser.parse_args()
    if args.paired:
        return paired(args)
    if args.source:
        sys.path.insert(0, str(Path(args.source).resolve()))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import torch

    from mmrhub.benchmarks import MIPR
    from mmrhub.cores import usable_cores
    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import load_side
    from mmrhub.retrieve.encoders import CORPUS
    from mmrhub.retrieve.encoders import build_encoder
    from mmrhub.retrieve.options import DataOptions
    from mmrhub.retrieve.options import ModelSettings

    torch.set_num_threads(1)  # the main process's own work on one thread, as measured
    figures = {}
    with tempfile.TemporaryDirectory(prefix="mmrhub-feed-") as scratch:
        scratch = Path(scratch)
        backend, model, preset = tiny_model(scratch)
        encoder = build_encoder(backend, str(model), ModelSettings(preset=preset).resolve(str(model), "embedding"))
        if args.transfer == "gpu" and not args.forward and getattr(encoder, "chat", False):
            from mmrhub.retrieve.model_inputs import Compact

            encoder.compact = Compact.for_model(encoder.module, "cuda", torch.bfloat16)
        sent = "as to a bf16 CUDA model" if getattr(encoder, "compact", None) else "float32"
        print(
            f"model: tiny {preset} ({backend}); pixel values sent {sent}; {usable_cores()} usable cores here; "
            f"torch {torch.__version__}"
        )
        for kind in args.kinds.split(","):
            folder = scratch / kind
            write_data(folder, kind, args.items)
            side = load_side(DataOptions(MIPR, str(folder)), "corpus")
            items = Items(side.dataset, side.table, encoder.orientation)
            label = {"mipr": "800x800 JPEG + title", "m2kr": "1024x1400 PNG + 300-word passage"}[kind]
            splits = ["before", "now"] if args.before and hasattr(encoder, "prepare") else ["now"]
            for split in splits:
                for workers in (int(w) for w in args.workers.split(",")):
                    run = measure(encoder, items, CORPUS, workers, args.batch_size, args.forward, split == "before")
                    per_item = {key: run[key] / run["items"] * 1000 for key in ("main", "workers", "model")}
                    share = per_item["main"] / (per_item["main"] + per_item["workers"])
                    per_core = 1000 / per_item["workers"] if per_item["workers"] else float("inf")
                    # A 16-core host: one core for the main process, the rest for workers; the main process itself
                    # caps the rate at 1000 / its ms per item.
                    host = min((HOST_CORES - 1) * per_core, 1000 / per_item["main"])
                    figures[f"{kind} {split} {workers}"] = {
                        **run,
                        **{f"{k}_ms_per_item": v for k, v in per_item.items()},
                    }
                    print(
                        f"{kind} ({label}), {split}, {workers} worker(s): {run['items'] / run['wall']:.1f} items/s "
                        f"wall; {per_core:.1f} items/s per worker core ({per_item['workers']:.1f} ms CPU an item); "
                        f"main process {per_item['main']:.2f} ms an item = {share:.1%} of the CPU"
                        + (f" (+ model {per_item['model']:.1f} ms)" if args.forward else "")
                        + f"; a {HOST_CORES}-core host: ~{host:,.0f} items/s vs ~{GPU_ITEMS_PER_S[kind]} items/s "
                        "the H200 consumes (estimate)"
                    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


def paired(args) -> None:
    """This bench on ``args.paired`` (before) and on this checkout (after), each in its own child process, sides
    alternating, ``args.rounds`` rounds; the median of each figure, before and after."""
    import statistics
    import subprocess

    passed = ["--items", str(args.items), "--workers", args.workers, "--batch-size", str(args.batch_size)]
    passed += ["--kinds", args.kinds, "--transfer", args.transfer] + ["--forward"] * args.forward
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="mmrhub-feed-paired-") as scratch:
        for number in range(args.rounds):
            for side in ("before", "after") if number % 2 == 0 else ("after", "before"):
                out = Path(scratch) / f"{side}-{number}.json"
                source = ["--source", args.paired] if side == "before" else []
                subprocess.run([sys.executable, __file__, *passed, *source, "--json", str(out)], check=True)
                runs[side].append(json.loads(out.read_text()))
    print(f"\npaired: {args.paired} (before) and this checkout (after), median of {args.rounds} round(s), ms an item")
    figures = {}
    for name in runs["after"][0]:
        row = {}
        for side in runs:
            for key in ("main_ms_per_item", "workers_ms_per_item"):
                row[f"{side} {key}"] = statistics.median(run[name][key] for run in runs[side])
        figures[name] = row
        print(
            f"{name}: main process {row['before main_ms_per_item']:.2f} -> {row['after main_ms_per_item']:.2f} "
            f"({row['after main_ms_per_item'] / row['before main_ms_per_item']:.2f}x); worker "
            f"{row['before workers_ms_per_item']:.1f} -> {row['after workers_ms_per_item']:.1f} "
            f"({row['after workers_ms_per_item'] / row['before workers_ms_per_item']:.2f}x)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "medians": figures}, indent=1))


if __name__ == "__main__":
    main()
