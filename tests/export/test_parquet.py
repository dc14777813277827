"""Parquet writing: the embedded storage is datasets' own, shards and row groups are sized by datasets' rules."""

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _export_helpers import embedded_expected
from datasets import load_dataset
from datasets.table import embed_table_storage

import mipr
import mmrhub.export.parquet as parquet
from mmrhub.export.parquet import ImageChecks
from mmrhub.export.parquet import RowSource
from mmrhub.export.parquet import binary_array
from mmrhub.export.parquet import file_name
from mmrhub.export.parquet import start_embedding
from mmrhub.export.parquet import write_split


def test_embedded_storage_equals_datasets_embed_table_storage():
    corpus = mipr.load("corpus")
    table = corpus.with_format("arrow")[:]
    checks = ImageChecks()
    ours = start_embedding(table, corpus.features, checks, RowSource("corpus"))()
    checks.shutdown()
    theirs = embed_table_storage(table)
    assert ours.schema == theirs.schema
    assert ours.equals(theirs)
    assert ours["image"][0].as_py()["bytes"][:2] == b"\xff\xd8"


def test_chained_url_keeps_the_members_name():
    assert file_name("splitzip://Web_Image/A27558.png::/d/Web_Image.zip.001|/d/Web_Image.zip.002") == "A27558.png"
    assert file_name("zip://q/person_0001.jpg::https://host/query_images.zip") == "person_0001.jpg"
    assert file_name("/data/images/product_images/4f0114c9a825e418.jpg") == "4f0114c9a825e418.jpg"


def test_shards_stay_under_the_limit_and_row_groups_follow_datasets(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "MAX_ROW_GROUP_SIZE", "20KB")  # datasets' row-group rule, scaled down
    corpus = mipr.load("corpus")
    written = write_split(corpus, tmp_path, "corpus", "test", max_shard_size="100KB")
    from datasets.arrow_writer import get_writer_batch_size_from_data_size

    rows_per_group = get_writer_batch_size_from_data_size(len(corpus), corpus._estimate_nbytes())
    assert 1 < rows_per_group < len(corpus)
    shards = sorted(tmp_path.glob("corpus/*.parquet"))
    assert [p.relative_to(tmp_path).as_posix() for p in shards] == written.files
    assert len(shards) > 2 and all(p.name.endswith(f"-of-{len(shards):05d}.parquet") for p in shards)
    assert all(p.stat().st_size <= 100_000 for p in shards)
    assert written.download_size == sum(p.stat().st_size for p in shards)
    groups = [
        pq.ParquetFile(p).metadata.row_group(i).num_rows
        for p in shards
        for i in range(pq.ParquetFile(p).num_row_groups)
    ]
    assert max(groups) == rows_per_group and sum(groups) == len(corpus) == written.num_examples
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: corpus\n  data_files:\n  - split: test\n    path: corpus/test-*\n---\n"
    )
    loaded = load_dataset(str(tmp_path), "corpus", split="test").with_format("arrow")[:]
    assert loaded.to_pylist() == embedded_expected(corpus.with_format("arrow")[:]).to_pylist()


def test_empty_split_gets_one_empty_shard(tmp_path):
    empty = mipr.load("queries").select([])
    written = write_split(empty, tmp_path, "queries", "test")
    assert written.files == ["queries/test-00000-of-00001.parquet"] and written.num_examples == 0
    assert pq.read_table(tmp_path / written.files[0]).num_rows == 0


def test_the_joined_binary_array_equals_pyarrows_own(monkeypatch):
    cases = [[b"ab", b"", b"\xff\xd8xyz"], [], [b""], [b"a", None, b"c"], [None]]
    for values in cases:
        built = binary_array(values)
        built.validate(full=True)
        assert built.type == pa.binary() and built.equals(pa.array(values, pa.binary())), values
    monkeypatch.setattr(parquet, "_BINARY_BYTES", 3)  # values past 32-bit offsets: pyarrow's own conversion
    monkeypatch.setattr(pa, "py_buffer", lambda *args: pytest.fail("joined past the offsets' range"))
    assert binary_array([b"ab", b"c"]).to_pylist() == [b"ab", b"c"]
