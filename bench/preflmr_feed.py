"""PreFLMR's feed rate per core, whole process on CPU: what its DataLoader workers prepare per core (images decoded,
query texts built, BERT tokenising, the query masks, the CLIP image processor at ViT-G's 224 pixels) and what the
main process spends per item (it receives each batch and copies it once, the pinned-memory copy a CUDA run makes:
a passage batch is one packed array, ``preflmr/batches.py``), beside a named peer in the same run: a CLIP dual
encoder's collate (``encoders.DualCollate``) with the same tokenizer and image processor on the same items.

The main process's CPU is split in two: per item while batches stream (from the first batch received to the last:
what caps the feed), and once per DataLoader (forking the workers, waiting for the first batch, joining them).
The latter does not grow with the corpus; over a few dozen items it had looked like a per-item cost.

Items, generated: M2KR-like queries (an 800x600 JPEG photo, a task instruction, a short question) and passages (a
300-word text). CPU seconds come from ``resource.getrusage`` of this process (``RUSAGE_SELF``) and of its joined
workers (``RUSAGE_CHILDREN``); each configuration runs in a fresh child process so the counts are its own.

    python bench/preflmr_feed.py [--items 96] [--corpus-items 480] [--workers 1,2] [--batch-size 16]
"""

import argparse
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

INSTRUCTION = "Using the provided image, obtain documents that address the subsequent question."
WORDS = "the castle was designed by an architect whose museum of natural history stands in the old town".split()


class Items:
    """Rows as the pipeline's ``Items`` hands them to a worker: the image decoded there, from its JPEG bytes."""

    def __init__(self, role: str, count: int):
        import numpy as np
        from PIL import Image

        rng = np.random.default_rng(0)
        self.role, self.rows = role, []
        for i in range(count):
            if role == "queries":
                small = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
                photo = Image.fromarray(small).resize((800, 600), Image.Resampling.BICUBIC)
                data = io.BytesIO()
                photo.save(data, format="JPEG", quality=90)
                self.rows.append((f"q{i}", "who designed this building?" if i % 3 else None, data.getvalue()))
            else:
                self.rows.append((f"p{i}", " ".join(rng.choice(WORDS, 300)), None))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        from mmrhub.retrieve.data_loading import Row
        from mmrhub.retrieve.images import decoded
        from mmrhub.retrieve.presets import EXIF_IGNORE

        row_id, text, data = self.rows[index]
        image = decoded({"path": None, "bytes": data}, EXIF_IGNORE) if data else None
        return Row(row_id, text, image, INSTRUCTION if self.role == "queries" else None)


def copied(value):
    """Every tensor of a batch copied once (the main process's work on a GPU host, but the model's): a tensor, or a
    packed batch's one array (what the pin-memory thread copies, ``TokenBatch.pin_memory``)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if hasattr(value, "host"):
        return value.host().clone()
    if isinstance(value, dict):
        return {key: copied(item) for key, item in value.items()}
    return value


def measure(args) -> dict:
    """One configuration, in this (child) process: items/s per worker core and the main process's CPU per item."""
    import torch

    from mmrhub.retrieve.encoders import DualCollate
    from mmrhub.retrieve.late_interaction.preflmr.encoder import build_preflmr_encoder

    torch.set_num_threads(1)
    encoder = build_preflmr_encoder(args.model, image_processor=args.processor)
    if args.collate == "preflmr":
        collate = encoder.collate(args.role)
    else:  # the peer: a CLIP dual encoder's collate with the same tokenizer and processor
        tokenizer = encoder.query_tokenizer if args.role == "queries" else encoder.context_tokenizer
        length = 32 if args.role == "queries" else 512
        processor = encoder.image_processor if args.role == "queries" else _NoImages()
        collate = DualCollate(tokenizer, processor, length, True, prepare_image=lambda row_id, image: image)
    items = Items(args.role, args.items)
    loader = torch.utils.data.DataLoader(
        items, batch_size=args.batch_size, num_workers=args.workers, collate_fn=collate, persistent_workers=False
    )
    before = main_seconds()
    started = time.perf_counter()
    batches = iter(loader)
    first = len(copied(next(batches))["ids"])  # the workers forked, the first batch received
    streaming = main_seconds()
    for batch in batches:
        copied(batch)
    streamed = main_seconds()
    wall = time.perf_counter() - started
    del batches, loader
    main_cpu = main_seconds() - before
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers_cpu = children.ru_utime + children.ru_stime
    return {
        "items_per_worker_core_s": args.items / workers_cpu,
        "main_ms_per_item": 1000 * (streamed - streaming) / (args.items - first),
        "main_once_ms": 1000 * (main_cpu - (streamed - streaming)),
        "main_ms_per_item_whole_run": 1000 * main_cpu / args.items,
        "main_share": main_cpu / (main_cpu + workers_cpu),
        "wall_items_s": args.items / wall,
    }


def main_seconds() -> float:
    """This process's CPU seconds so far (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _NoImages:
    """The peer's processor for text-only passages: DualCollate asks for pixel values of every row."""

    def __call__(self, images, return_tensors="pt"):
        import torch

        return {"pixel_values": torch.zeros(len(images), 3, 1, 1)}


def tiny_model(folder: Path) -> tuple:
    """The tiny PreFLMR checkpoint, and a CLIP image processor at ViT-G's input (224, bicubic, centre crop)."""
    from tiny_models import build_preflmr
    from tiny_models import m2kr_sample_texts
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    model = build_preflmr(folder / "preflmr", texts=m2kr_sample_texts(ROOT / "data" / "m2kr"))
    processor = folder / "processor-224"
    CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(
        processor
    )
    return model, processor


def main() -> int:
    """Each role x worker count x collate in a child process; a table of the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=96, help="queries (a worker core prepares about 80 a second)")
    parser.add_argument("--corpus-items", type=int, default=480, help="passages (about 700 a second)")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)  # role workers collate model processor
    args = parser.parse_args()
    if args.child:
        role, workers, collate, model, processor = args.child
        child = argparse.Namespace(
            role=role,
            workers=int(workers),
            collate=collate,
            model=model,
            processor=processor,
            items=args.items,
            batch_size=args.batch_size,
        )
        print(json.dumps(measure(child)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        model, processor = tiny_model(Path(folder))
        print(
            "| side | workers | collate | items/s per worker core | main ms/item, streaming | main ms once | "
            "main ms/item, whole run | main share | wall items/s |"
        )
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
        for role in ("queries", "corpus"):
            items = args.items if role == "queries" else args.corpus_items
            for workers in [int(w) for w in args.workers.split(",")]:
                for collate in ("preflmr", "peer DualCollate"):
                    command = [sys.executable, __file__, "--items", str(items), "--batch-size"]
                    command += [str(args.batch_size), "--child", role, str(workers), collate.split()[0]]
                    command += [str(model), str(processor)]
                    done = subprocess.run(command, capture_output=True, text=True, check=True)
                    row = json.loads(done.stdout.strip().splitlines()[-1])
                    print(
                        f"| {role} | {workers} | {collate} | {row['items_per_worker_core_s']:.0f} | "
                        f"{row['main_ms_per_item']:.3f} | {row['main_once_ms']:.0f} | "
                        f"{row['main_ms_per_item_whole_run']:.2f} | {row['main_share']:.1%} | "
                        f"{row['wall_items_s']:.0f} |"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
