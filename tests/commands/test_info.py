from mmrhub.cli import main


def test_info_mipr_prints_configs_features_and_counts(capsys):
    assert main(["info", "mipr"]) == 0
    out = capsys.readouterr().out
    assert "## queries (test): 27 rows" in out
    assert "## corpus (test): 254 rows" in out
    assert "## qrels (test): 27 rows" in out
    assert "- image: Image(mode=None, decode=True)" in out


def test_info_reads_another_data_dir(capsys, tmp_path):
    from _mipr_helpers import copy_sample
    from _mipr_helpers import edit_jsonl

    data_dir = copy_sample(tmp_path / "mipr")
    edit_jsonl(
        data_dir / "mipr_query.jsonl", lambda rows: rows.append({"idx": "28", "query": "新", "image_url": "1.jpg"})
    )
    assert main(["info", "mipr", "--data-dir", str(data_dir)]) == 0
    assert "## queries (test): 28 rows" in capsys.readouterr().out
