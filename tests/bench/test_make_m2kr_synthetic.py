"""bench/make_m2kr_synthetic.py at a small scale: a folder `mmrhub info m2kr --data-dir` accepts, in the Hub's layout,
every image file its own, and the lines it prints of what it wrote."""

import io
import sys
import zipfile

import pytest
from _paths import ROOT
from PIL import Image

from mmrhub.cli import main

sys.path.insert(0, str(ROOT / "bench"))
import make_m2kr_synthetic  # noqa: E402

TABLE = "train-00000-of-00001.parquet"


def test_a_small_synthetic_folder_is_what_info_reads_and_what_it_printed(tmp_path, capsys):
    out = tmp_path / "m2kr"
    make_m2kr_synthetic.main([str(out), "--queries", "60", "--passages", "300"])
    printed = capsys.readouterr().out.splitlines()
    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    assert files == [
        "Web_Image.zip.001",
        "Web_Image.zip.002",
        "Web_Image.zip.003",
        f"challenge_answers/{TABLE}",
        f"challenge_data/{TABLE}",
        f"challenge_passage/{TABLE}",
        "query_images.zip",
    ]
    size = {name: (out / name).stat().st_size for name in files}
    parts = sum(size[f"Web_Image.zip.00{number}"] for number in (1, 2, 3))
    assert printed[0] == f"wrote {out}: 7 files, {sum(size.values()):,} bytes"
    assert [line.split() for line in printed[1:]] == [
        [f"challenge_data/{TABLE}", "60", "rows", f"{size[f'challenge_data/{TABLE}']:,}", "bytes"],
        [f"challenge_passage/{TABLE}", "300", "rows", f"{size[f'challenge_passage/{TABLE}']:,}", "bytes"],
        [
            f"challenge_answers/{TABLE}",
            "60",
            "rows,",
            "70",
            "positives",
            f"{size[f'challenge_answers/{TABLE}']:,}",
            "bytes",
        ],
        ["query_images.zip", "60", "images", f"{size['query_images.zip']:,}", "bytes"],
        ["Web_Image.zip.001-.003", "300", "screenshots", "in", "3", "parts", f"{parts:,}", "bytes"],
    ]

    assert main(["info", "m2kr", "--data-dir", str(out)]) == 0  # every table, and every image's member header
    info = capsys.readouterr().out
    for config, rows in (("challenge_data", 60), ("challenge_passage", 300), ("challenge_answers", 60)):
        assert f"## {config} (train): {rows} rows" in info

    import m2kr

    queries = m2kr.load("challenge_data", data_dir=out)
    assert sorted(queries["task"]).count("image+text-to-document") == 28  # 47% with a question, as the card says
    assert queries[0]["image"].size == (40, 40)  # a query image, read from the zip and decoded
    passages = m2kr.load("challenge_passage", data_dir=out)
    assert passages[299]["image"].size == (48, 32)  # the last screenshot, from the split archive's last members
    with zipfile.ZipFile(out / "query_images.zip") as archive:
        images = [archive.read(info) for info in archive.infolist()]
    assert len(set(images)) == 60  # each query image its own bytes: caches keyed on them see 60
    for data in images[:3]:
        Image.open(io.BytesIO(data)).verify()


def test_it_replaces_nothing(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        make_m2kr_synthetic.main([str(tmp_path), "--queries", "3", "--passages", "9"])
    message = f"{tmp_path}: not empty. Pass a new or empty folder: the generator replaces nothing."
    assert capsys.readouterr().err.splitlines()[-1] == f"make_m2kr_synthetic.py: error: {message}"
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]
