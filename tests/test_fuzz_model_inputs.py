"""Generated damage to what a model reads (seeded and bounded): a PreFLMR checkpoint's config.json and tokenizer
settings, and the images DataLoader workers decode. Each case ends in a result, or in one error naming the file
(the config, the tokenizer settings) or the table, row and image; never another exception type (a TypeError, a
KeyError, torch's words) and never torch's "Caught ... in DataLoader worker process" with a traceback."""

import io
import json
import shutil
import struct

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

pytest.importorskip("torch")

from tiny_models import build_preflmr  # noqa: E402

from mmrhub.retrieve.late_interaction.preflmr.config import FLMR_DEFAULTS  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.config import TEXT_KEYS  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.config import VISION_DEFAULTS  # noqa: E402
from mmrhub.retrieve.late_interaction.preflmr.config import read_config  # noqa: E402

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# JSON values a hand edit or a broken tool leaves: wrong types, absurd sizes, NaN-like strings, nesting
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["no", "yes", "", "32", "bert-base-uncased", "nan", "1e9"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)
KEYS = (
    [*FLMR_DEFAULTS, "transformer_mapping_num_hidden_layers", "model_type", "text_config", "vision_config"]
    + [f"text_config.{key}" for key in TEXT_KEYS]
    + [f"vision_config.{key}" for key in VISION_DEFAULTS]
)
TOKENIZER_KEYS = [("query_tokenizer", "query_maxlen"), ("context_tokenizer", "doc_maxlen")]


@pytest.fixture(scope="module")
def checkpoint(built):
    return built(build_preflmr, "tiny", texts=["who designed this castle"])


@SETTINGS
@given(changes=st.lists(st.tuples(st.sampled_from(KEYS), VALUES), min_size=1, max_size=3))
def test_a_damaged_preflmr_config_reads_or_names_the_file_and_key(checkpoint, tmp_path_factory, changes):
    folder = shutil.copytree(checkpoint, tmp_path_factory.mktemp("damaged") / "tiny")
    path = folder / "config.json"
    config = json.loads(path.read_text())
    for key, value in changes:
        section, _, name = key.rpartition(".")
        holder = config.get(section) if section else config
        if section and not isinstance(holder, dict):
            holder = config[section] = {}
        holder[name] = value
    path.write_text(json.dumps(config))
    try:
        read_config(folder)
    except (ValueError, FileNotFoundError) as err:
        message = str(err)
        assert len(message.splitlines()) == 1, message
        assert message.startswith(f"{path}: ") or message.startswith(f"{folder / 'mapping_base'}"), message


@SETTINGS
@given(which=st.sampled_from(TOKENIZER_KEYS), value=VALUES)
def test_a_damaged_tokenizer_setting_reads_or_names_the_file_and_key(checkpoint, tmp_path_factory, which, value):
    folder = shutil.copytree(checkpoint, tmp_path_factory.mktemp("damaged") / "tiny")
    sub, key = which
    path = folder / sub / "tokenizer_config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), key: value}))
    try:
        config = read_config(folder)
    except ValueError as err:
        assert str(err).startswith(f"{path}: {key} is "), err
    else:
        assert 2 <= getattr(config, key) <= 512


# --- images ------------------------------------------------------------------------------------------------------


def a_jpeg() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (48, 40), (200, 30, 90)).save(buffer, "JPEG")
    return buffer.getvalue()


JPEG = a_jpeg()
DAMAGE = st.one_of(
    st.tuples(st.just("cut"), st.integers(0, len(JPEG) - 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, len(JPEG) - 1), st.integers(0, 255)), max_size=8)),
    st.tuples(st.just("size"), st.tuples(st.integers(0, 65535), st.integers(0, 65535))),
    st.tuples(st.just("bytes"), st.binary(max_size=64)),
)


def damaged(damage) -> bytes:
    kind, how = damage
    if kind == "cut":
        return JPEG[:how]
    if kind == "flip":
        data = bytearray(JPEG)
        for at, value in how:
            data[at] = value
        return bytes(data)
    if kind == "size":  # the frame header's height and width
        start = JPEG.find(b"\xff\xc0")
        return JPEG[: start + 5] + struct.pack(">HH", *how) + JPEG[start + 9 :]
    return how


def items_of(images: list):
    """``Items`` over a corpus table of ``images`` (bytes), as the builders give it (decode=False)."""
    import datasets

    from mmrhub.declaration import Side
    from mmrhub.retrieve.data_loading import Items

    table = {
        "item_id": [f"p{i}" for i in range(len(images))],
        "title": ["a title"] * len(images),
        "image": [{"bytes": data, "path": f"products/p{i}.jpg"} for i, data in enumerate(images)],
    }
    features = datasets.Features(
        {"item_id": datasets.Value("string"), "title": datasets.Value("string"), "image": datasets.Image()}
    )
    return Items(datasets.Dataset.from_dict(table, features=features), Side("corpus", "item_id", "title", "image"))


def collate(rows):
    """As a model's collate: every image made RGB and resized, to the pixels."""
    return [row.image.convert("RGB").resize((8, 8)).tobytes() for row in rows]


@settings(SETTINGS, max_examples=40)
@given(damage=DAMAGE, at=st.integers(0, 5))
def test_a_damaged_image_decodes_or_names_its_table_row_and_image(damage, at):
    from mmrhub.retrieve.data_loading import ItemError

    images = [JPEG] * 6
    images[at] = damaged(damage)
    items = items_of(images)
    try:
        rows = items.__getitems__(list(range(6)))
        collate(rows)
    except ItemError as err:
        assert str(err).startswith(f"corpus item_id=p{at}: image products/p{at}.jpg cannot be decoded as an image ("), (
            err
        )
        assert str(err).endswith("). Replace or remove that file."), err
        assert len(str(err).splitlines()) == 1


@settings(SETTINGS, max_examples=8)
@given(damage=DAMAGE, at=st.integers(0, 5))
def test_a_damaged_image_in_a_worker_is_the_one_line_of_the_main_process(damage, at):
    """The same images through a DataLoader with two workers: the same result or the same one line."""
    from mmrhub.retrieve.data_loading import ItemError
    from mmrhub.retrieve.data_loading import loader

    images = [JPEG] * 6
    images[at] = damaged(damage)
    found = {}
    for workers in (0, 2):
        try:
            found[workers] = (
                "batches",
                [b for batch in loader(items_of(images), collate, 2, workers, False) for b in batch],
            )
        except ItemError as err:
            found[workers] = ("error", str(err))
        except Exception as err:  # anything else: the same type and words as without workers
            found[workers] = (type(err).__name__, str(err))
    assert found[0] == found[2]
    assert "Caught" not in str(found[2][1]) and "Traceback" not in str(found[2][1])
