"""The M2KR builder on the bundled sample: counts, spot checks, features, lazy images, streaming, cache, load()."""

import io
import logging
import zipfile

import datasets
import PIL.Image
import pytest
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import copy_sample
from _m2kr_helpers import prepare
from _m2kr_helpers import replace_passage_members
from _m2kr_helpers import source_rows
from _m2kr_helpers import unsplit_zip
from _m2kr_helpers import write_rows

import m2kr
import m2kr_archive

COUNTS = {"challenge_data": 30, "challenge_passage": 300, "challenge_answers": 30}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = tmp_path_factory.mktemp("m2kr-cache")
    return {config: prepare(config, SAMPLE, cache) for config in m2kr.CONFIG_NAMES}


def _spots(n):
    return (0, n // 2, n - 1)


def _pixels(image: PIL.Image.Image):
    return image.mode, image.size, image.tobytes()


def _member_pixels(archive: zipfile.ZipFile, name: str):
    return _pixels(PIL.Image.open(io.BytesIO(archive.read(name))))


@pytest.mark.parametrize("config", m2kr.CONFIG_NAMES)
def test_counts_split_and_features(built, config):
    dataset = built[config]
    assert dataset.num_rows == COUNTS[config] == len(source_rows(config))
    assert str(dataset.split) == "train"
    assert dataset.features == m2kr.FEATURES[config]


def test_challenge_data_spot_checks(built):
    dataset, rows = built["challenge_data"], source_rows("challenge_data")
    queries = zipfile.ZipFile(SAMPLE / "query_images.zip")
    for index in _spots(len(rows)):
        row, source = dataset[index], rows[index]
        question = source["question"] or ""
        assert {key: row[key] for key in source} == {**source, "question": question}
        assert row["task"] == ("image-to-document" if question == "" else "image+text-to-document")
        assert _pixels(row["image"]) == _member_pixels(queries, "query_images/" + source["img_path"])


def test_query_blocks_and_tasks(built):
    dataset = built["challenge_data"]
    # person images without a question (null in the source), entity images with one, scenes with "".
    assert [source["question"] is None for source in source_rows("challenge_data")[:10]] == [True] * 10
    assert dataset["task"] == ["image-to-document"] * 10 + ["image+text-to-document"] * 10 + ["image-to-document"] * 10
    assert dataset[15]["question"].endswith("?") and dataset[25]["question"] == ""


def test_challenge_passage_spot_checks(built):
    dataset, rows = built["challenge_passage"], source_rows("challenge_passage")
    archive = unsplit_zip()
    for index in _spots(len(rows)):
        row, source = dataset[index], rows[index]
        assert {key: row[key] for key in source} == source
        assert _pixels(row["image"]) == _member_pixels(archive, "Web_Image/" + source["page_screenshot"])
    assert dataset[0]["passage_id"] == "Q5247669" and "A27558" in dataset["passage_id"]


def test_challenge_answers_spot_checks_and_joins(built):
    dataset, rows = built["challenge_answers"], source_rows("challenge_answers")
    for index in _spots(len(rows)):
        assert dataset[index] == rows[index]
    passages = set(built["challenge_passage"]["passage_id"])
    assert all(pid in passages for ids in dataset["pos_item_ids"] for pid in ids)
    assert dataset["question_id"] == built["challenge_data"]["question_id"]
    assert sum(len(ids) > 1 for ids in dataset["pos_item_ids"]) == 6


def test_raw_reference_is_absolute_and_resolvable_anywhere(built, tmp_path, monkeypatch):
    raw = built["challenge_passage"].cast_column("image", datasets.Image(decode=False))[150]
    parts = "|".join(str(SAMPLE / part) for part in m2kr.ARCHIVES["challenge_passage"])
    assert raw["image"] == {"bytes": None, "path": f"splitzip://Web_Image/{raw['page_screenshot']}::{parts}"}
    query = built["challenge_data"].cast_column("image", datasets.Image(decode=False))[29]["image"]
    assert query["path"] == f"splitzip://query_images/scene_0029.jpg::{SAMPLE / 'query_images.zip'}"
    monkeypatch.chdir(tmp_path)
    assert built["challenge_passage"][150]["image"].size == (48, 32)


def test_preparation_never_reads_image_content(tmp_path, monkeypatch):
    """Prepare with image opening forbidden, and record every byte range read from the parts."""
    reads = []
    readinto = m2kr_archive.PartsFile.readinto

    def recording(self, buffer):
        start = self.tell()
        count = readinto(self, buffer)
        reads.append((start, start + count))
        return count

    def forbidden(*args, **kwargs):
        raise AssertionError("an image was opened during preparation")

    monkeypatch.setattr(m2kr_archive.PartsFile, "readinto", recording)
    monkeypatch.setattr(PIL.Image, "open", forbidden)
    monkeypatch.setattr(zipfile.ZipFile, "open", forbidden)
    dataset = prepare("challenge_passage", SAMPLE, tmp_path / "cache")
    monkeypatch.undo()

    archive = unsplit_zip()
    # Local headers are read (to check that each is where the directory says); member data never.
    data_spans = [
        (start, start + info.compress_size)
        for info in archive.infolist()
        for start in [info.header_offset + 30 + len(info.filename) + len(info.extra)]
    ]
    assert reads and all(end <= start or begin >= stop for begin, end in reads for start, stop in data_spans)
    assert dataset[7]["image"].size == (48, 32)  # decoded on access


def test_garbage_images_prepare_and_fail_only_on_access(tmp_path):
    data_dir = copy_sample(tmp_path)
    replace_passage_members(data_dir, transform=lambda name, data: b"not an image " + name.encode())
    dataset = prepare("challenge_passage", data_dir, tmp_path / "cache")
    assert dataset.num_rows == 300 and dataset["passage_id"][0] == "Q5247669"  # a column access decodes nothing
    with pytest.raises(PIL.UnidentifiedImageError):
        dataset[0]


@pytest.mark.parametrize("config", m2kr.CONFIG_NAMES)
def test_streaming_yields_the_same_rows(built, config):
    builder = m2kr.M2kr(config_name=config, data_dir=str(SAMPLE))
    streamed = builder.as_streaming_dataset(split="train")
    assert streamed.features == m2kr.FEATURES[config]
    arrow = built[config]
    if "image" in arrow.features:
        streamed = streamed.cast_column("image", datasets.Image(decode=False))
        arrow = arrow.cast_column("image", datasets.Image(decode=False))
    assert list(streamed) == arrow.to_list()


def test_streaming_decodes_the_same_images(built):
    streamed = m2kr.M2kr(config_name="challenge_passage", data_dir=str(SAMPLE)).as_streaming_dataset(split="train")
    for index, row in enumerate(streamed.take(3)):
        assert _pixels(row["image"]) == _pixels(built["challenge_passage"][index]["image"])


def test_load_logs_when_it_uses_the_bundled_sample(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        dataset = m2kr.load("challenge_answers", cache_dir=str(tmp_path))
    assert dataset.num_rows == 30
    assert f"loading the bundled M2KR sample {SAMPLE}" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        m2kr.load("challenge_answers", data_dir=str(SAMPLE), cache_dir=str(tmp_path))
    assert "bundled" not in caplog.text


def test_load_streaming_and_unknown_config(tmp_path):
    streamed = m2kr.load("challenge_data", streaming=True)
    assert isinstance(streamed, datasets.IterableDataset)
    assert [row["question_id"] for row in streamed.take(2)] == ["4100", "4107"]
    with pytest.raises(ValueError, match="Unknown M2KR config 'queries'; expected one of challenge_data"):
        m2kr.load("queries")


def test_cache_is_rebuilt_when_the_data_changes(tmp_path):
    data_dir = copy_sample(tmp_path)
    cache = str(tmp_path / "cache")
    assert m2kr.load("challenge_answers", data_dir=str(data_dir), cache_dir=cache).num_rows == 30
    write_rows(data_dir, "challenge_answers", source_rows("challenge_answers")[:29])
    assert m2kr.load("challenge_answers", data_dir=str(data_dir), cache_dir=cache).num_rows == 29


@pytest.mark.parametrize("module", [m2kr, m2kr_archive], ids=["m2kr", "m2kr_archive"])
def test_cache_hash_follows_the_builder_source(tmp_path, monkeypatch, module):
    before = m2kr.cache_hash(str(SAMPLE))
    assert m2kr.cache_hash(str(SAMPLE)) == before
    edited = tmp_path / f"{module.__name__}.py"
    edited.write_text(open(module.__file__, encoding="utf-8").read() + "\n# edited\n", encoding="utf-8")
    monkeypatch.setattr(module, "__file__", str(edited))
    assert m2kr.cache_hash(str(SAMPLE)) != before


def test_remote_sources_go_through_the_download_manager(tmp_path, monkeypatch):
    """data_dir=HUB_TABLES reads the two Hub repos; here they point at the sample (tests are offline)."""
    downloaded = []
    download = datasets.DownloadManager.download

    def recording(self, url_or_urls):
        downloaded.append(url_or_urls)
        return download(self, url_or_urls)

    monkeypatch.setattr(datasets.DownloadManager, "download", recording)
    monkeypatch.setattr(m2kr, "HUB_TABLES", str(SAMPLE))
    monkeypatch.setattr(m2kr, "HUB_IMAGES", str(SAMPLE))
    builder = m2kr.M2kr(config_name="challenge_passage", data_dir=m2kr.HUB_TABLES, cache_dir=str(tmp_path))
    builder.download_and_prepare()
    assert downloaded == [
        {"challenge_passage": [str(SAMPLE / "challenge_passage" / "train-00000-of-00001.parquet")]},
        [str(SAMPLE / part) for part in m2kr.ARCHIVES["challenge_passage"]],
    ]
    assert builder.as_dataset(split="train")[299]["image"].size == (48, 32)


def test_builder_errors_reach_the_user_unwrapped(tmp_path):
    data_dir = copy_sample(tmp_path)
    rows = source_rows("challenge_answers")
    write_rows(data_dir, "challenge_answers", rows + [rows[0]])
    with pytest.raises(m2kr.M2krDataError, match='duplicate id "4100"') as caught:
        m2kr.load("challenge_answers", data_dir=str(data_dir), cache_dir=str(tmp_path / "cache"))
    assert not isinstance(caught.value, datasets.exceptions.DatasetGenerationError)
