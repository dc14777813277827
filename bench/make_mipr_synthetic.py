"""Write a full-scale synthetic MIPR data dir in the official layout.

3,522 queries over 3,013 query images, 30,731 products, 447,809 judgments (127 or 128 a query), every grade
present. Images are one tiny JPEG by default; ``image_bytes`` grows a noise JPEG to that size (noise: most of its
bytes are entropy-coded data, few pixels), ``photo_side`` makes a photo-like one instead (a gradient with a little
noise, as many pixels per byte as a product photo: 800 is the side of MIPR's product images).

    python bench/make_mipr_synthetic.py OUT_DIR [--image-bytes 30000 | --photo-side 800]
"""

import argparse
import io
import json
import random
from pathlib import Path

from PIL import Image
from written import print_written

NUM_QUERIES = 3_522
NUM_QUERY_IMAGES = 3_013
NUM_PRODUCTS = 30_731
NUM_JUDGMENTS = 447_809
GRADE_WEIGHTS = {"L1": 0.2, "L2": 0.2, "N1": 0.1, "N2": 0.25, "N3": 0.25}


def jpeg_bytes(size: int, seed: int = 0) -> bytes:
    """A valid JPEG of at least ``size`` bytes: noise compresses badly, so the file grows with its side."""
    rng = random.Random(seed)
    side = 8
    while True:
        image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=90)
        if buffer.tell() >= size:
            return buffer.getvalue()
        side *= 2 if buffer.tell() * 4 < size else 1.2
        side = int(side)


def photo_jpeg_bytes(side: int, seed: int = 0) -> bytes:
    """A ``side`` x ``side`` JPEG that compresses as a photo does: a colour gradient with a little noise."""
    rng = random.Random(seed)
    ramp = [round(255 * i / max(1, side - 1)) for i in range(side)]
    rows = bytearray()
    for y in range(side):
        for x in range(side):
            grain = rng.randint(-6, 6)
            rows += bytes(min(255, max(0, v + grain)) for v in (ramp[x], ramp[y], (ramp[x] + ramp[y]) // 2))
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), bytes(rows)).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def make(out_dir, image_bytes: int = 0, seed: int = 0, photo_side: int = 0) -> Path:
    out = Path(out_dir)
    rng = random.Random(seed)
    query_images, product_images = out / "images" / "query_images", out / "images" / "product_images"
    query_images.mkdir(parents=True, exist_ok=True)
    product_images.mkdir(parents=True, exist_ok=True)
    image = photo_jpeg_bytes(photo_side, seed) if photo_side else jpeg_bytes(image_bytes, seed)

    categories = [
        f"类目{a}-子类{b}-细类{c}-叶类{d}" for a in range(12) for b in range(4) for c in range(4) for d in range(5)
    ]
    item_ids = [f"{rng.getrandbits(64):016x}" for _ in range(NUM_PRODUCTS)]
    with open(out / "mipr_corpus.jsonl", "w", encoding="utf-8") as f:
        for number, item_id in enumerate(item_ids):
            row = {
                "item_id": item_id,
                "title": f"合成商品标题{number}号适用多种场景",
                "pict_url": f"{item_id}.jpg",
                "treecate_full_path": rng.choice(categories),
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            (product_images / f"{item_id}.jpg").write_bytes(image)

    for number in range(1, NUM_QUERY_IMAGES + 1):
        (query_images / f"{number}.jpg").write_bytes(image)
    # The first 3,013 queries each have their own image; the rest reuse one, so images are shared.
    image_of = list(range(1, NUM_QUERY_IMAGES + 1)) + [
        rng.randint(1, NUM_QUERY_IMAGES) for _ in range(NUM_QUERIES - NUM_QUERY_IMAGES)
    ]
    with open(out / "mipr_query.jsonl", "w", encoding="utf-8") as f:
        for idx in range(1, NUM_QUERIES + 1):
            row = {"idx": str(idx), "query": f"合成问题{idx}该用什么解决", "image_url": f"{image_of[idx - 1]}.jpg"}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    per_query, extra = divmod(NUM_JUDGMENTS, NUM_QUERIES)
    grades, weights = list(GRADE_WEIGHTS), list(GRADE_WEIGHTS.values())
    with open(out / "mipr_annotation.jsonl", "w", encoding="utf-8") as f:
        for idx in range(1, NUM_QUERIES + 1):
            judged = rng.sample(item_ids, per_query + (idx <= extra))
            labels = rng.choices(grades, weights, k=len(judged))
            items = [{"item_id": item, "final_grade": grade} for item, grade in zip(judged, labels)]
            f.write(json.dumps({"idx": str(idx), "items": items}) + "\n")
    return out


def contents(out: Path) -> list:
    """What ``out`` holds, read back from its files: (label, files, what they hold), for ``print_written``."""
    entries = []
    for table in ("mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"):
        data = (out / table).read_bytes()
        rows, judgments = data.count(b"\n"), data.count(b'"final_grade"')
        holds = f"{rows:,} rows" + (f", {judgments:,} judgments" if judgments else "")
        entries.append((table, [out / table], holds))
    for folder in ("images/query_images", "images/product_images"):
        files = list((out / folder).iterdir())
        entries.append((f"{folder}/", files, f"{len(files):,} images"))
    return entries


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--image-bytes", type=int, default=0, help="minimum size of each image file")
    parser.add_argument("--photo-side", type=int, default=0, help="photo-like images of this side instead")
    args = parser.parse_args()
    out = make(args.out_dir, args.image_bytes, photo_side=args.photo_side)
    print_written(out, contents(out))
