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


# Scoring and the builder apply one rule to a table without rows: the format module's (m2kr_format, mipr_format).


def test_an_m2kr_answers_table_without_rows_is_refused_by_evaluate_as_by_info(capsys, tmp_path):
    from _m2kr_helpers import copy_sample
    from _m2kr_helpers import write_rows
    from _paths import M2KR_RUN

    data_dir = copy_sample(tmp_path / "m2kr")
    write_rows(data_dir, "challenge_answers", [])
    path = data_dir / "challenge_answers" / "train-00000-of-00001.parquet"
    message = (
        f"{path}: no rows. An M2KR challenge_answers table has at least one; the file was written empty or cut short."
    )
    assert main(["evaluate", "m2kr", str(M2KR_RUN), "--data-dir", str(data_dir)]) == 1
    assert capsys.readouterr() == ("", f"mmrhub evaluate: error: {message}\n")
    assert main(["info", "m2kr", "--data-dir", str(data_dir), "--no-check-images"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"mmrhub info: error: {message}"


def test_a_mipr_table_without_records_is_refused_by_evaluate_as_by_info(capsys, tmp_path):
    from _mipr_helpers import copy_sample
    from _paths import MIPR_EMBEDDING

    data_dir = copy_sample(tmp_path / "mipr")
    (data_dir / "mipr_annotation.jsonl").write_text("\n\n")
    message = (
        f"{data_dir / 'mipr_annotation.jsonl'}: no records. A MIPR qrels file has at least one; the file was written "
        "empty or cut short."
    )
    assert main(["evaluate", "mipr", str(MIPR_EMBEDDING), "--data-dir", str(data_dir)]) == 1
    assert capsys.readouterr() == ("", f"mmrhub evaluate: error: {message}\n")
    assert main(["info", "mipr", "--data-dir", str(data_dir)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"mmrhub info: error: {message}"


def test_dataset_infos_onto_a_sample_image_is_refused(capsys):
    from mmrhub.data import SAMPLES

    image = SAMPLES / "mipr" / "images" / "query_images" / "2.jpg"
    before = image.read_bytes()
    assert main(["info", "--dataset-infos", str(image)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"mmrhub info: error: --dataset-infos {image}: is {SAMPLES / 'mipr' / 'images'}, one of this command's "
        "inputs; write elsewhere.\n"
    )
    assert image.read_bytes() == before
