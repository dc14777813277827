"""``mmrhub info m2kr``, and the module interface the mmrhub tooling relies on."""

from _m2kr_helpers import SAMPLE
from _m2kr_helpers import copy_sample

import m2kr
from mmrhub.cli import main


def test_info_prints_configs_features_and_row_counts(tmp_path, capsys):
    data_dir = copy_sample(tmp_path)
    assert main(["info", "m2kr", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# m2kr: {data_dir}\n")
    for config, rows in (("challenge_data", 30), ("challenge_passage", 300), ("challenge_answers", 30)):
        assert f"## {config} (train): {rows} rows" in out
    assert "- task: Value('string')" in out and "- page_screenshot: Value('string')" in out
    assert out.count("- image: Image(") == 2


def test_source_files_list_every_file_a_config_reads():
    tables = {config: str(SAMPLE / config / "train-00000-of-00001.parquet") for config in m2kr.CONFIG_NAMES}
    assert m2kr.source_files("challenge_answers", str(SAMPLE)) == [tables[config] for config in m2kr.CONFIG_NAMES]
    assert m2kr.source_files("challenge_passage", str(SAMPLE)) == [tables["challenge_passage"]] + [
        str(SAMPLE / part) for part in ("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003")
    ]
    assert m2kr.source_files("challenge_data", str(SAMPLE))[1:] == [str(SAMPLE / "query_images.zip")]


def test_info_over_a_url_reads_the_directories_and_no_image(tmp_path, range_server, capsys):
    from _remote_m2kr import archives
    from _remote_m2kr import remote_m2kr

    remote = remote_m2kr(tmp_path, range_server, queries=8, passages=40)
    range_server.reset()
    assert main(["info", "m2kr", "--data-dir", str(remote["data"]), "--images-dir", remote["url"]]) == 0
    assert "## challenge_passage (train): 40 rows" in capsys.readouterr().out
    for archive in archives(remote["served"]).values():
        touched, directory = archive.read(range_server.requests)
        assert touched == set() and directory  # the zip directory only: rows hold references
