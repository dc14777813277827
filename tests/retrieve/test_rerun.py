"""Every run can be made again from its record: ``RUN.json.meta.json`` holds the command line, every option (defaults
included), the data and its fingerprints, the device and the versions; ``mmrhub rerun`` repeats the run with them,
names each difference, and the repeated run is the recorded one. CPU, a tiny random Chinese-CLIP, a copy of the
bundled MIPR sample."""

import json
import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _mipr_helpers import read_jsonl  # noqa: E402
from _mipr_helpers import write_jsonl  # noqa: E402
from _paths import MIPR_SAMPLE  # noqa: E402
from tiny_models import build_tiny_chinese_clip  # noqa: E402


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run of a tiny Chinese-CLIP on a copy of the sample, made through ``mmrhub retrieve`` with a few options."""
    from mmrhub.cli import main

    folder = tmp_path_factory.mktemp("rerun")
    data = shutil.copytree(MIPR_SAMPLE, folder / "data")
    texts = [row["title"] for row in read_jsonl(data / "mipr_corpus.jsonl")]
    model = build_tiny_chinese_clip(folder / "chinese-clip-tiny", texts)
    run = folder / "runs" / "tiny.json"
    argv = ["retrieve", "mipr", "--data-dir", str(data), "--backend", "transformers", "--model", str(model)]
    argv += ["--top-k", "7", "--batch-size", "5", "--num-workers", "0", "--cache-dir", str(folder / "cache"), "-o"]
    assert main([*argv, str(run), "--no-eval"]) == 0
    return {"folder": folder, "data": data, "model": model, "run": run}


@pytest.mark.slow
def test_the_record_holds_every_option_and_input(recorded):
    meta = json.loads((recorded["folder"] / "runs" / "tiny.json.meta.json").read_text())
    options = meta["options"]
    assert (options["top_k"], options["batch_size"], options["search"], options["runtime"]["num_workers"]) == (
        7,
        5,
        "torch",
        0,
    )
    assert options["settings"]["preset"] is None and meta["settings"]["name"] == "chinese-clip"  # asked, then used
    data = meta["data"]
    assert (data["benchmark"], data["folder"], data["split"], data["sample"]) == (
        "mipr",
        str(recorded["data"]),
        "test",
        False,
    )
    assert set(data["tables"]) == {"mipr_query.jsonl", "mipr_corpus.jsonl", "mipr_annotation.jsonl"}
    assert data["corpus"]["count"] == 254 and len(data["corpus"]["fingerprint"]) == 64
    assert (meta["device"], meta["dtype"], meta["candidates_sha256"]) == ("cpu", "torch.float32", None)
    for library in ("torch", "transformers", "sentence-transformers", "tokenizers", "pillow", "numpy", "pyarrow"):
        assert meta["versions"][library], library
    assert {"torchvision", "datasets", "mmrhub"} <= set(meta["versions"])
    assert meta["mmrhub_source"] is None or len(meta["mmrhub_source"]["commit"]) == 40
    assert meta["command_line"] and meta["cwd"]
    assert meta["model"]["exif_orientation"] == "ignore" and meta["model"]["similarity"].startswith("float32")


@pytest.mark.slow
def test_rerun_makes_the_same_run_and_names_nothing_else(recorded, capsys):
    from mmrhub.cli import main

    meta = recorded["folder"] / "runs" / "tiny.json.meta.json"
    written = recorded["run"].read_bytes()
    assert main(["rerun", str(meta), "--no-eval"]) == 0
    out = capsys.readouterr().out
    again = recorded["folder"] / "runs" / "tiny.rerun.json"
    assert again.read_bytes() == written and recorded["run"].read_bytes() == written  # the record is left alone
    assert "The repeated run is identical to the recorded one, byte for byte." in out
    assert out.count("recorded,") == 1 and "options.runtime.use_cache: true recorded, false now (as asked)" in out
    assert json.loads((again.parent / "tiny.rerun.json.meta.json").read_text())["rerun_of"] == str(meta)


@pytest.mark.slow
def test_rerun_names_each_difference_in_the_environment_and_inputs(recorded, tmp_path, capsys):
    from mmrhub.cli import main

    meta = json.loads((recorded["folder"] / "runs" / "tiny.json.meta.json").read_text())
    meta["versions"]["torch"] = "1.0.0"
    meta["mmrhub_source"] = {"commit": "0" * 40, "modified": False}
    data = shutil.copytree(recorded["data"], tmp_path / "data")
    queries = read_jsonl(data / "mipr_query.jsonl")
    queries[0]["query"] += "吗"
    write_jsonl(data / "mipr_query.jsonl", queries)
    edited = tmp_path / "tiny.json.meta.json"
    edited.write_text(json.dumps(meta))
    shutil.copy(recorded["run"], tmp_path / "tiny.json")
    assert main(["rerun", str(edited), "--data-dir", str(data), "--no-eval", "--output", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if " recorded, " in line]
    assert any(line.startswith('versions.torch: "1.0.0" recorded, "') for line in lines)
    assert any(line.startswith("mmrhub_source.commit: ") for line in lines) or any(
        line.startswith("mmrhub_source: ") for line in lines
    )
    assert any(line.startswith("data.tables.mipr_query.jsonl: ") for line in lines)
    assert any(line.startswith("data.queries.fingerprint: ") for line in lines)
    assert any(line.startswith("data.folder: ") and line.endswith("(as asked)") for line in lines)
    assert not any(line.startswith("data.tables.mipr_corpus.jsonl") for line in lines)  # unchanged: not named
    assert len(lines) == len(set(lines))  # each once, before or after the run


def test_a_record_without_options_is_refused_with_the_reason(tmp_path):
    from mmrhub.records.meta import read_meta

    old = tmp_path / "old.json.meta.json"
    old.write_text(json.dumps({"command": "retrieve", "run": "old.json"}))
    with pytest.raises(ValueError, match="written before runs recorded their options"):
        read_meta(old)


def retrieve_again(recorded, data, capsys) -> str:
    """``mmrhub retrieve`` of the recorded options on ``data``, with the recorded run's cache; its output."""
    from mmrhub.cli import main

    argv = ["retrieve", "mipr", "--data-dir", str(data), "--backend", "transformers", "--model", str(recorded["model"])]
    argv += [
        "--top-k",
        "7",
        "--batch-size",
        "5",
        "--num-workers",
        "0",
        "--cache-dir",
        str(recorded["folder"] / "cache"),
    ]
    capsys.readouterr()
    assert main([*argv, "-o", str(data.parent / "again.json"), "--no-eval"]) == 0
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.slow
def test_a_replaced_product_image_is_embedded_again_and_named_by_rerun(recorded, tmp_path, capsys):
    from mmrhub.cli import main

    same = shutil.copytree(recorded["data"], tmp_path / "same" / "data")
    assert "254 embeddings reused" in retrieve_again(recorded, same, capsys)  # a copy: same bytes, same vectors
    data = shutil.copytree(recorded["data"], tmp_path / "changed" / "data")
    corpus = read_jsonl(data / "mipr_corpus.jsonl")
    images = data / "images" / "product_images"
    shutil.copyfile(images / corpus[11]["pict_url"], images / corpus[10]["pict_url"])
    assert "embeddings reused" not in retrieve_again(recorded, data, capsys)

    meta = recorded["folder"] / "runs" / "tiny.json.meta.json"
    output = tmp_path / "changed" / "rerun.json"
    assert main(["rerun", str(meta), "--data-dir", str(data), "--no-eval", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    line = next(line.strip() for line in out.splitlines() if line.strip().startswith("data.corpus.images"))
    assert line.startswith(
        f'data.corpus.images: 1 of 254 images differ in their bytes: {corpus[10]["pict_url"]} ("xxh3:'
    )
    assert "No difference in the environment" not in out
