"""Write a full-scale synthetic M2KR data dir in the layout of the two Hub repos.

6,415 queries and 47,318 passages, as the challenge card counts them, in the bundled sample's three blocks (person
images without a question, entity images with a question, scene images with an empty question): 47% of the queries
have a question and 601 have more than one positive, as the card says. Tables as Jingbiao/M2KR-WWW2025-Challenge has
them (``challenge_data/``, ``challenge_passage/``, ``challenge_answers/``, one Parquet file each, the source
columns), images as Jingbiao/M2KR-Challenge has them: ``query_images.zip``, and the screenshot zip split at byte
level into ``Web_Image.zip.001``-``.003``. Every image file is distinct (one of 64 drawn images marked with its own
id), so a cache keyed on image bytes sees each one.

Images are tiny by default: 26 MB in all at full scale. ``--screenshot-kb 2600`` makes screenshots of the real
average size (121 GB / 47,318 = 2.6 MB; 2.68 MB each here), about 127 GB in all. The zip is written whole and then
split in place, so the disk needs a third more while it runs. ``--query-image-kb`` sizes the query images (noise
JPEGs) the same way.

    python bench/make_m2kr_synthetic.py OUT_DIR [--screenshot-kb 2600] [--query-image-kb 60] [--queries N --passages N]
"""

import argparse
import io
import random
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "data")]
import make_m2kr_sample as sample  # noqa: E402  (the bundled sample's passages, drawings and zip writer)
from make_mipr_synthetic import jpeg_bytes  # noqa: E402
from written import print_written  # noqa: E402

import m2kr_archive  # noqa: E402
from m2kr_format import SOURCE_SCHEMAS  # noqa: E402

NUM_QUERIES = 6_415
NUM_PASSAGES = 47_318
QUESTION_SHARE = 0.47  # the card: "question: ~47% populated"
MULTI_POSITIVE = 601  # the card: "Most queries have a single positive; 601 have more than one."
POOL = 64  # distinct drawn images per kind; members reuse them, each marked with its own id
WEB_PARTS = tuple(f"Web_Image.zip.{number:03d}" for number in range(1, sample.PARTS + 1))
# block: its passages' id form, passage text and query drawing (the sample's)
BLOCKS = {
    "person": (lambda rng: f"Q{rng.randrange(10_000, 100_000_000)}", sample.person_passage, sample.person),
    "entity": (lambda rng: f"A{rng.randrange(100, 10_000_000)}", sample.entity_passage, sample.entity),
    "scene": (lambda rng: f"WIT_{rng.randrange(10_000_000):07d}", sample.scene_passage, sample.scene),
}


def screenshot(rng: np.random.Generator, kb: int) -> bytes:
    """A page-like PNG: flat header and margins around a noisy block sized to reach about ``kb`` KB."""
    side = int((kb * 1024 / 3) ** 0.5)
    page = np.full((side + 40, side + 40, 3), 245, dtype=np.uint8)
    page[:16] = (40, 60, 140)
    page[20 : 20 + side, 20 : 20 + side] = rng.integers(0, 256, (side, side, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(page).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def marked_png(png: bytes, mark: str) -> bytes:
    """``png`` with a text chunk naming ``mark`` after its header: the same pixels, bytes of its own."""
    text = b"Comment\x00" + mark.encode()
    chunk = struct.pack(">I", len(text)) + b"tEXt" + text + struct.pack(">I", zlib.crc32(b"tEXt" + text))
    return png[:33] + chunk + png[33:]  # the signature (8 bytes) and the IHDR chunk (25) come first


def marked_jpeg(jpeg: bytes, mark: str) -> bytes:
    """``jpeg`` with a comment segment naming ``mark`` after its start marker."""
    text = mark.encode()
    return jpeg[:2] + b"\xff\xfe" + struct.pack(">H", len(text) + 2) + text + jpeg[2:]


def thirds(total: int) -> dict:
    """Passages per block, as the sample splits them."""
    person, entity = -(-total // 3), total // 3
    return {"person": person, "entity": entity, "scene": total - person - entity}


def queries_per_block(total: int) -> dict:
    """The question share for entities; the rest halved between people and scenes."""
    entity = round(QUESTION_SHARE * total)
    person = -(-(total - entity) // 2)
    return {"person": person, "entity": entity, "scene": total - entity - person}


def unique_ids(rng, form, count: int) -> list:
    ids = {}
    while len(ids) < count:
        ids.setdefault(form(rng), None)
    return list(ids)


def make(out_dir, queries=NUM_QUERIES, passages=NUM_PASSAGES, screenshot_kb=0, query_image_kb=0, seed=0) -> Path:
    """Write the data dir ``out_dir`` (new or empty: nothing already there is replaced) and return it."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out}: not empty. Pass a new or empty folder: the generator replaces nothing.")
    if passages < 9 or queries < 1:
        raise ValueError(f"{passages} passages, {queries} queries: at least 9 passages and 1 query are needed.")
    out.mkdir(parents=True, exist_ok=True)
    rng, pixels = random.Random(seed), np.random.default_rng(seed)

    corpus, rows = {}, {name: [] for name in SOURCE_SCHEMAS["challenge_passage"].names}
    for block, count in thirds(passages).items():
        form, text, _ = BLOCKS[block]
        corpus[block] = [text(rng, pid) for pid in unique_ids(rng, form, count)]
        for pid, content, _ in corpus[block]:
            rows["passage_id"].append(pid)
            rows["passage_content"].append(content)
            rows["page_screenshot"].append(f"{pid}.png")
    pool = [
        screenshot(pixels, screenshot_kb) if screenshot_kb else sample.png(sample.screenshot, (48, 32), rng)
        for _ in range(POOL)
    ]
    names = rows["page_screenshot"]
    members = ((f"Web_Image/{name}", marked_png(pool[index % POOL], name)) for index, name in enumerate(names))
    sample.write_zip(out / "Web_Image.zip", members)
    sample.split(out / "Web_Image.zip")

    data = {name: [] for name in SOURCE_SCHEMAS["challenge_data"].names}
    answers = {name: [] for name in SOURCE_SCHEMAS["challenge_answers"].names}
    several = set(rng.sample(range(queries), round(MULTI_POSITIVE * queries / NUM_QUERIES)))
    images = []
    for block, count in queries_per_block(queries).items():
        draw = BLOCKS[block][2]
        drawn = [
            jpeg_bytes(query_image_kb * 1024, rng.randrange(2**32))
            if query_image_kb
            else sample.jpeg(draw, (40, 40), rng)
            for _ in range(POOL)
        ]
        for _ in range(count):
            index = len(data["question_id"])
            picks = rng.sample(corpus[block], rng.choice((2, 3)) if index in several else 1)
            if block == "entity":
                question = rng.choice(sample.QUESTIONS).format(kind=picks[0][2])
            else:  # the source has both forms of "no question"
                question = None if block == "person" else ""
            qid, img_path = str(4100 + index * 7), f"{block}_{index:05d}.jpg"
            row = {"img_path": img_path, "instruction": sample.INSTRUCTIONS[block], "question": question}
            row |= {"question_id": qid, "pos_item_ids": [], "pos_item_contents": []}  # blank, as in the release
            for name, column in data.items():
                column.append(row[name])
            answers["question_id"].append(qid)
            answers["pos_item_ids"].append([pid for pid, _, _ in picks])
            images.append((f"query_images/{img_path}", marked_jpeg(drawn[index % POOL], img_path)))
    sample.write_zip(out / "query_images.zip", images)

    for config, table in (("challenge_data", data), ("challenge_passage", rows), ("challenge_answers", answers)):
        (out / config).mkdir()
        pq.write_table(pa.table(table, schema=SOURCE_SCHEMAS[config]), out / config / sample.TABLE_FILE)
    return out


def contents(out: Path) -> list:
    """What ``out`` holds, read back from its files: (label, files, what they hold), for ``print_written``."""
    entries = []
    for config in SOURCE_SCHEMAS:
        path = out / config / sample.TABLE_FILE
        entries.append((f"{config}/{sample.TABLE_FILE}", [path], f"{pq.read_metadata(path).num_rows:,} rows"))
    positives = pq.read_table(out / "challenge_answers" / sample.TABLE_FILE, columns=["pos_item_ids"])
    label, files, holds = entries[-1]
    entries[-1] = (label, files, f"{holds}, {pc.sum(pc.list_value_length(positives[0])).as_py():,} positives")
    with zipfile.ZipFile(out / "query_images.zip") as archive:
        entries.append(("query_images.zip", [out / "query_images.zip"], f"{len(archive.infolist()):,} images"))
    parts = [str(out / part) for part in WEB_PARTS]
    # Read back as the builder reads it: the parts joined in place.
    with m2kr_archive.open_parts(fsspec.filesystem("file"), parts) as joined:
        screenshots = len(m2kr_archive.open_zip(joined, parts).infolist())
    entries.append((f"{WEB_PARTS[0]}-{WEB_PARTS[-1][-4:]}", parts, f"{screenshots:,} screenshots in 3 parts"))
    return entries


def main(argv=None):
    parser = argparse.ArgumentParser(
        Path(__file__).name, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out_dir", type=Path, help="a new or empty folder")
    parser.add_argument("--queries", type=int, default=NUM_QUERIES, help="default: %(default)s, the real count")
    parser.add_argument("--passages", type=int, default=NUM_PASSAGES, help="default: %(default)s, the real count")
    parser.add_argument("--screenshot-kb", type=int, default=0, help="screenshot size; 2600 is the real average")
    parser.add_argument("--query-image-kb", type=int, default=0, help="query image size (default: tiny)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        out = make(args.out_dir, args.queries, args.passages, args.screenshot_kb, args.query_image_kb, args.seed)
    except ValueError as err:
        parser.error(str(err))
    print_written(out, contents(out))


if __name__ == "__main__":
    main()
