import logging
from collections import Counter

import datasets
import pytest
from _mipr_helpers import copy_sample
from _mipr_helpers import edit_jsonl
from _mipr_helpers import read_jsonl
from PIL import Image
from PIL import UnidentifiedImageError

import mipr

SAMPLE = mipr.SAMPLE_DIR


@pytest.fixture(scope="module")
def sample():
    return {config: mipr.load(config) for config in mipr.CONFIG_NAMES}


def test_exact_counts(sample):
    assert {config: ds.num_rows for config, ds in sample.items()} == {"queries": 27, "corpus": 254, "qrels": 27}
    grades = Counter(item["final_grade"] for row in sample["qrels"] for item in row["items"])
    assert grades == {"L1": 74, "L2": 27, "N1": 27, "N2": 27, "N3": 108}
    assert sum(grades.values()) == 263


def test_queries_first_middle_last(sample):
    queries = sample["queries"]
    assert queries[0]["idx"] == "1" and queries[0]["query"] == "表面的老垢用啥清洗剂除"
    assert queries[0]["image_url"] == "1.jpg"
    middle = {key: queries[13][key] for key in ("idx", "query", "image_url")}
    assert middle == {"idx": "14", "query": "孩子学走路老撞桌角", "image_url": "12.jpg"}
    assert (
        queries[26]["idx"] == "27" and queries[26]["query"] == "白衬衫沾了红酒" and queries[26]["image_url"] == "24.jpg"
    )
    # Queries sharing one situational image.
    assert queries[0]["image_url"] == queries[1]["image_url"]


def test_corpus_first_middle_last(sample):
    corpus = sample["corpus"]
    first = {key: corpus[0][key] for key in ("item_id", "title", "pict_url", "treecate_full_path")}
    assert first == {
        "item_id": "7ab0ab84666fa41b",
        "title": "凯易牌除垢剂水垢清除剂制冰机专用",
        "pict_url": "7ab0ab84666fa41b.jpg",
        "treecate_full_path": "家清-环境清洁-清洁剂-除垢剂",
    }
    assert corpus[127]["pict_url"] == corpus[127]["item_id"] + ".jpg"
    assert corpus[253]["title"] == "云朵洞洞书婴儿" and corpus[253]["treecate_full_path"] == "图书-童书-绘本-儿童绘本"
    assert all(len(row["treecate_full_path"].split("-")) == 4 for row in corpus.select_columns(["treecate_full_path"]))


def test_qrels_rows_match_the_source(sample):
    source = read_jsonl(SAMPLE / "mipr_annotation.jsonl")
    for position in (0, 13, 26):
        assert sample["qrels"][position] == source[position]
    assert sample["qrels"][0]["items"][0] == {"item_id": "f6a3bf59613d3aaa", "final_grade": "L1"}


def test_sample_covers_zero_one_and_several_l1_categories(sample):
    category = dict(zip(sample["corpus"]["item_id"], sample["corpus"]["treecate_full_path"]))
    l1_categories = [
        len({category[item["item_id"]] for item in row["items"] if item["final_grade"] == "L1"})
        for row in sample["qrels"]
    ]
    assert {0, 1, 2, 3} <= set(l1_categories)


def test_features_equal_the_declared_ones(sample):
    for config, dataset in sample.items():
        assert dataset.features == mipr.FEATURES[config]
        assert dataset.split == "test"


def test_grades_are_defined_once_as_data():
    assert list(mipr.GRADES) == ["L1", "L2", "N1", "N2", "N3"]
    assert mipr.GRADES["N1"].startswith("Constraint-violating")
    assert mipr.GAINS == {"L1": 2, "L2": 1, "N1": 0, "N2": 0, "N3": 0}


def test_the_builders_gains_are_the_metrics():
    # The metric folder stands alone (copied anywhere), so the builder cannot import its gains: this holds them equal.
    from mmrhub.metrics.mipr import mipr_measures

    assert mipr.GAINS == mipr_measures.GAINS
    assert list(mipr.GAINS) == list(mipr.GRADES)  # one shape: every grade named, in the format's order


def test_images_are_stored_as_references_and_decoded_on_access(sample):
    storage = sample["queries"].data.column("image")[0].as_py()
    assert storage == {"bytes": None, "path": str(SAMPLE / "images" / "query_images" / "1.jpg")}
    raw = sample["corpus"].cast_column("image", datasets.Image(decode=False))[0]["image"]
    assert raw["bytes"] is None and raw["path"].endswith("images/product_images/7ab0ab84666fa41b.jpg")
    image = sample["corpus"][0]["image"]
    assert isinstance(image, Image.Image) and image.size == (48, 48)


def test_preparation_never_reads_image_content(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    for path in (data_dir / "images" / "product_images").iterdir():
        path.write_bytes(b"not an image")
    corpus = mipr.load("corpus", data_dir=data_dir)
    assert corpus.num_rows == 254
    with pytest.raises(UnidentifiedImageError, match="cannot identify image file"):
        corpus[0]["image"]


def test_streaming_yields_the_same_rows(sample):
    for config in mipr.CONFIG_NAMES:
        streamed = mipr.load(config, streaming=True)
        expected = sample[config]
        if "image" in expected.features:
            streamed = streamed.cast_column("image", datasets.Image(decode=False))
            expected = expected.cast_column("image", datasets.Image(decode=False))
        assert list(streamed) == expected.to_list()


def test_load_without_data_dir_says_it_uses_the_sample(caplog):
    with caplog.at_level(logging.WARNING, logger="mipr"):
        mipr.load("queries")
    assert "bundled MIPR sample" in caplog.text and "not the benchmark" in caplog.text


def test_load_rejects_an_unknown_config():
    with pytest.raises(ValueError, match="Unknown MIPR config 'query'; expected one of queries, corpus, qrels"):
        mipr.load("query")


def test_the_bundled_sample_is_the_default_of_load_and_of_the_builder(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="mipr"):
        builder = mipr.Mipr(config_name="queries", cache_dir=str(tmp_path))
    assert builder.config.data_dir == str(mipr.SAMPLE_DIR)
    assert f"No data_dir given: loading the bundled MIPR sample {mipr.SAMPLE_DIR}, not the benchmark." in caplog.text
    builder.download_and_prepare()
    assert builder.as_dataset(split="test").to_list() == mipr.load("queries", cache_dir=str(tmp_path)).to_list()


def test_cache_is_rebuilt_when_the_data_changes(tmp_path):
    data_dir = copy_sample(tmp_path / "mipr")
    cache_dir = str(tmp_path / "cache")
    assert mipr.load("queries", data_dir=data_dir, cache_dir=cache_dir).num_rows == 27
    edit_jsonl(
        data_dir / "mipr_query.jsonl", lambda rows: rows.append({"idx": "28", "query": "新问题", "image_url": "1.jpg"})
    )
    assert mipr.load("queries", data_dir=data_dir, cache_dir=cache_dir).num_rows == 28


def test_cache_key_follows_the_builder_source(tmp_path):
    import importlib.util

    copy = tmp_path / "mipr_copy.py"
    copy.write_text(open(mipr.__file__, encoding="utf-8").read() + "\n# changed\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mipr_copy", copy)
    changed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(changed)
    assert changed.cache_hash(str(SAMPLE)) != mipr.cache_hash(str(SAMPLE))
    assert mipr.cache_hash(str(SAMPLE)) == mipr.cache_hash(str(SAMPLE))
