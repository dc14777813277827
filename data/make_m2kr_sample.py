"""Write the bundled M2KR sample (data/m2kr/) in the layout of the Hub repos. Deterministic: rerun to regenerate.

Tables as in Jingbiao/M2KR-WWW2025-Challenge (``<config>/train-00000-of-00001.parquet``), images as in
Jingbiao/M2KR-Challenge: ``query_images.zip`` and the screenshot zip split at byte level into
``Web_Image.zip.001``-``.003`` (each split point falls inside a member). 30 queries in the real data's three
blocks: person images without a question, entity images with a question, scene images with an empty question.
300 passages, 100 of each id form: ``Q<digits>`` (people), ``A<digits>`` (entities), ``WIT_<digits>`` (scenes).
``baseline/simulated_top5.json`` is a top-5 run in the official run format.
"""

import io
import json
import random
import shutil
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from PIL import ImageDraw

OUT = Path(__file__).resolve().parent / "m2kr"
PARTS = 3
TABLE_FILE = "train-00000-of-00001.parquet"
ZIP_TIME = (2025, 1, 20, 12, 0, 0)

FIRST = [
    "Margaret",
    "Henrik",
    "Amelia",
    "Tomasz",
    "Lucia",
    "Arthur",
    "Ingrid",
    "Rafael",
    "Edith",
    "Kenji",
    "Clara",
    "Oskar",
    "Beatriz",
    "Samuel",
    "Helena",
    "Victor",
    "Nadia",
    "Felix",
    "Rosa",
    "Walter",
]
LAST = [
    "Ellison",
    "Lindqvist",
    "Hartley",
    "Nowak",
    "Ferraro",
    "Pemberton",
    "Solberg",
    "Quintero",
    "Ashdown",
    "Morikawa",
    "Brandt",
    "Vasquez",
    "Kowalczyk",
    "Whitfield",
    "Okafor",
    "Dumont",
    "Castellano",
    "Reyes",
]
JOBS = [
    "botanist",
    "painter",
    "civil engineer",
    "composer",
    "physician",
    "novelist",
    "architect",
    "chemist",
    "photographer",
    "politician",
    "astronomer",
    "sculptor",
    "economist",
    "film director",
    "footballer",
]
PLACES = [
    ("Leeds", "English"),
    ("Uppsala", "Swedish"),
    ("Kraków", "Polish"),
    ("Bologna", "Italian"),
    ("Porto", "Portuguese"),
    ("Lyon", "French"),
    ("Bergen", "Norwegian"),
    ("Osaka", "Japanese"),
    ("Valencia", "Spanish"),
    ("Graz", "Austrian"),
    ("Dundee", "Scottish"),
    ("Lagos", "Nigerian"),
]
KINDS = [
    "cathedral",
    "suspension bridge",
    "railway station",
    "lighthouse",
    "concert hall",
    "castle",
    "botanical garden",
    "observatory",
    "town hall",
    "museum of natural history",
]
SCENES = [
    "a harbour at dusk with fishing boats",
    "a mountain pass covered in snow",
    "a crowded street market",
    "a wheat field under storm clouds",
    "a tram crossing a river bridge",
    "a library reading room",
    "a coastal cliff path",
    "a vineyard on terraced hills",
    "a frozen lake with skaters",
    "a desert canyon",
]
QUESTIONS = [
    "In which year was this {kind} completed?",
    "Who designed this {kind}?",
    "What city is this {kind} located in?",
    "How tall is the main tower of this {kind}?",
]
INSTRUCTIONS = {
    "person": "Identify the person in the image and retrieve the document that describes them.",
    "entity": "Using the provided image, obtain documents that address the subsequent question: ",
    "scene": "Retrieve the document that best describes the content of this image.",
}
# question index -> number of positives (several multi-positive queries, as in the real ground truth)
MULTI_POSITIVE = {3: 2, 8: 3, 14: 2, 19: 2, 23: 3, 28: 2}


def person_passage(rng, pid):
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    job = rng.choice(JOBS)
    city, nationality = rng.choice(PLACES)
    born = rng.randint(1840, 1960)
    died = born + rng.randint(45, 92)
    text = (
        f"Image description: a black-and-white portrait photograph of {name}, seated and facing the camera. "
        f"{name} ({born}–{died}) was a {nationality} {job} born in {city}. Occupation: {job}. "
        f"Place of birth: {city}. Date of birth: {rng.randint(1, 28)} {rng.choice(['March', 'July', 'October'])} "
        f"{born}. Date of death: {died}. Known for work that shaped the {job} profession in {city}."
    )
    return pid, text, name


def entity_passage(rng, pid):
    kind = rng.choice(KINDS)
    city, _ = rng.choice(PLACES)
    name = f"{rng.choice(LAST)} {kind.title()}"
    year = rng.randint(1700, 1990)
    text = (
        f"Image description: a photograph of the {name}, a {kind} in {city}. The {name} is a {kind} located "
        f"in the centre of {city}. Construction began in {year - rng.randint(3, 20)} and it was completed in "
        f"{year} to a design by {rng.choice(FIRST)} {rng.choice(LAST)}. Its main tower is "
        f"{rng.randint(20, 140)} metres tall. Location: {city}. Inception: {year}."
    )
    return pid, text, kind


def scene_passage(rng, pid):
    scene = rng.choice(SCENES)
    city, _ = rng.choice(PLACES)
    text = (
        f"Image description: {scene}, photographed near {city}. The picture appears in an encyclopedia "
        f"article about the region around {city}, illustrating its landscape and everyday life. "
        f"Caption: {scene.capitalize()} near {city}, {rng.randint(1950, 2020)}."
    )
    return pid, text, scene


def passages(rng):
    ids = ["Q5247669"] + [f"Q{rng.randint(10_000, 99_999_999)}" for _ in range(99)]
    ids += ["A27558"] + [f"A{rng.randint(100, 999_999)}" for _ in range(99)]
    ids += [f"WIT_{rng.randint(0, 9_999_999):07d}" for _ in range(100)]
    assert len(set(ids)) == len(ids)
    makers = [person_passage] * 100 + [entity_passage] * 100 + [scene_passage] * 100
    return [maker(rng, pid) for maker, pid in zip(makers, ids)]


def png(draw_fn, size, rng) -> bytes:
    image = Image.new("RGB", size, "white")
    draw_fn(ImageDraw.Draw(image), rng, size)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def jpeg(draw_fn, size, rng) -> bytes:
    image = Image.new("RGB", size, (rng.randint(150, 255), rng.randint(150, 255), rng.randint(150, 255)))
    draw_fn(ImageDraw.Draw(image), rng, size)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=60)
    return buffer.getvalue()


def screenshot(draw, rng, size):
    """A tiny web page: a coloured title bar, an image box and grey text lines."""
    width, height = size
    draw.rectangle([0, 0, width, 5], fill=(rng.randint(0, 120), rng.randint(0, 120), rng.randint(120, 255)))
    draw.rectangle([2, 8, 14, 22], fill=(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)))
    for y in range(8, height - 2, 4):
        draw.line([17, y, rng.randint(24, width - 2), y], fill=(90, 90, 90))


def person(draw, rng, size):
    width, height = size
    draw.ellipse([width // 4, 6, 3 * width // 4, height // 2 + 4], fill=(rng.randint(150, 230), 120, 100))
    draw.rectangle([width // 6, height // 2 + 6, 5 * width // 6, height], fill=(rng.randint(0, 100), 40, 90))


def entity(draw, rng, size):
    width, height = size
    draw.rectangle([8, height // 3, width - 8, height], fill=(rng.randint(90, 160), 90, 80))
    draw.polygon([(6, height // 3), (width // 2, 4), (width - 6, height // 3)], fill=(60, 60, rng.randint(60, 160)))


def scene(draw, rng, size):
    width, height = size
    draw.rectangle([0, height // 2, width, height], fill=(40, rng.randint(90, 170), 60))
    draw.ellipse([width - 18, 4, width - 6, 16], fill=(250, 210, 60))


def write_zip(path: Path, members, compress_every=0) -> int:
    """Members in order, streamed to ``path``; every ``compress_every``-th is deflated (the rest stored, as images
    usually are). Returns the number of members."""
    count = 0
    with zipfile.ZipFile(path, "w") as archive:
        for count, (name, data) in enumerate(members, 1):
            info = zipfile.ZipInfo(name, ZIP_TIME)
            deflate = compress_every and (count - 1) % compress_every == 0
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return count


def split_points(whole: Path, parts=PARTS) -> list:
    """Where a byte-level split into ``parts`` parts of equal size (the last one shorter) cuts ``whole``."""
    total = whole.stat().st_size
    size = -(-total // parts)
    return list(range(size, total, size))


def check_split_inside_members(whole: Path):
    """Every split point of the zip ``whole`` falls inside a member, so that readers must join the parts."""
    with zipfile.ZipFile(whole) as archive:
        spans = [
            (info.header_offset, info.header_offset + 30 + len(info.filename) + info.compress_size)
            for info in archive.infolist()
        ]
    for boundary in split_points(whole):
        assert any(start < boundary < end for start, end in spans), f"split point {boundary} between members"


def split(whole: Path, parts=PARTS) -> list:
    """Byte-level split of ``whole`` into ``whole.001``, ... like ``split -b``; ``whole`` is gone after. The tail is
    moved out part by part, so the disk never holds more than the archive and one part."""
    names = [Path(f"{whole}.{number:03d}") for number in range(1, parts + 1)]
    points = split_points(whole, parts)
    with open(whole, "r+b") as source:
        for point, name in reversed(list(zip(points, names[1:]))):
            source.seek(point)
            with open(name, "wb") as part:
                shutil.copyfileobj(source, part, 16 * 2**20)
            source.truncate(point)
    whole.replace(names[0])
    return names


def main():
    rng = random.Random(2025)
    corpus = passages(rng)
    by_form = {"person": corpus[:100], "entity": corpus[100:200], "scene": corpus[200:]}

    screenshots = []
    passage_rows = {"passage_id": [], "passage_content": [], "page_screenshot": []}
    for pid, text, _ in corpus:
        name = f"{pid}.png"
        passage_rows["passage_id"].append(pid)
        passage_rows["passage_content"].append(text)
        passage_rows["page_screenshot"].append(name)
        screenshots.append((f"Web_Image/{name}", png(screenshot, (48, 32), rng)))
    write_zip(OUT / "Web_Image.zip", screenshots, compress_every=5)
    check_split_inside_members(OUT / "Web_Image.zip")
    split(OUT / "Web_Image.zip")

    data_rows = {
        k: [] for k in ("img_path", "instruction", "question", "question_id", "pos_item_ids", "pos_item_contents")
    }
    answers = {"question_id": [], "pos_item_ids": []}
    query_images = []
    draw_fns = {"person": person, "entity": entity, "scene": scene}
    for index in range(30):
        block = ("person", "entity", "scene")[index // 10]
        pool = by_form[block]
        picks = rng.sample(range(len(pool)), MULTI_POSITIVE.get(index, 1))
        if index in (0, 10):  # the dataset card's example ids
            picks[0] = 0
        positives = [pool[pick][0] for pick in picks]
        qid = str(4100 + index * 7)
        img_path = f"{block}_{index:04d}.jpg"
        if block == "entity":
            question = rng.choice(QUESTIONS).format(kind=pool[picks[0]][2])
        else:
            question = None if block == "person" else ""  # the source has both forms of "no question"
        data_rows["img_path"].append(img_path)
        data_rows["instruction"].append(INSTRUCTIONS[block])
        data_rows["question"].append(question)
        data_rows["question_id"].append(qid)
        data_rows["pos_item_ids"].append([])  # blank in challenge_data, as in the challenge release
        data_rows["pos_item_contents"].append([])
        answers["question_id"].append(qid)
        answers["pos_item_ids"].append(positives)
        query_images.append((f"query_images/{img_path}", jpeg(draw_fns[block], (40, 40), rng)))
    write_zip(OUT / "query_images.zip", query_images)

    strings = pa.list_(pa.string())
    schemas = {
        "challenge_data": pa.schema(
            [
                ("img_path", pa.string()),
                ("instruction", pa.string()),
                ("question", pa.string()),
                ("question_id", pa.string()),
                ("pos_item_ids", strings),
                ("pos_item_contents", strings),
            ]
        ),
        "challenge_passage": pa.schema(
            [("passage_id", pa.string()), ("passage_content", pa.string()), ("page_screenshot", pa.string())]
        ),
        "challenge_answers": pa.schema([("question_id", pa.string()), ("pos_item_ids", strings)]),
    }
    for config, rows in (
        ("challenge_data", data_rows),
        ("challenge_passage", passage_rows),
        ("challenge_answers", answers),
    ):
        (OUT / config).mkdir(exist_ok=True)
        pq.write_table(pa.table(rows, schema=schemas[config]), OUT / config / TABLE_FILE)

    run = []
    all_ids = passage_rows["passage_id"]
    for index, (qid, positives) in enumerate(zip(answers["question_id"], answers["pos_item_ids"])):
        if index in MULTI_POSITIVE:  # odd ones find part of their set, so the recall variants differ
            found = positives[: len(positives) - 1] if index % 2 else positives
        else:
            found = [] if index % 4 == 0 else positives
        ranked = [pid for pid in rng.sample(all_ids, 10) if pid not in positives][: 5 - len(found)]
        for hit in found:
            ranked.insert(rng.randrange(len(ranked) + 1), hit)
        scores = sorted((round(rng.uniform(0.2, 0.9), 4) for _ in range(5)), reverse=True)
        run.append({"qid": qid, "ranked": [{"did": d, "score": s} for d, s in zip(ranked[:5], scores)]})
    (OUT / "baseline").mkdir(exist_ok=True)
    (OUT / "baseline" / "simulated_top5.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
