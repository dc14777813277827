"""``mmrhub retrieve m2kr --images-dir URL`` on a query subset and a candidates run: only the images of the queries
embedded and of the passages their pools name are read from the served archives; the rankings are those of a run
over every query and the whole corpus; the record repeats the subset (``mmrhub rerun``)."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _remote_m2kr import archives  # noqa: E402
from _remote_m2kr import images_of  # noqa: E402
from _remote_m2kr import local_copy  # noqa: E402
from _remote_m2kr import remote_m2kr  # noqa: E402
from _remote_m2kr import tables  # noqa: E402
from _remote_m2kr import whole_part_gets  # noqa: E402
from _remote_m2kr import write_run  # noqa: E402
from tiny_models import build_tiny_chinese_clip  # noqa: E402

from mmrhub.cli import main  # noqa: E402


@pytest.fixture
def served(tmp_path, range_server):
    remote = remote_m2kr(tmp_path, range_server, queries=30, passages=120, screenshot_kb=20, query_image_kb=8)
    rows = tables(remote["data"])
    texts = [row["passage_content"] for row in rows["challenge_passage"]]
    texts += [row["question"] or "" for row in rows["challenge_data"]]
    remote["model"] = build_tiny_chinese_clip(tmp_path / "clip", texts)
    remote["pools"] = write_run(remote["data"], tmp_path / "pools.json", failing=10, k=8)
    return remote


def retrieve(tmp_path, served, name, *options) -> list:
    out = tmp_path / name
    argv = ["retrieve", "m2kr", "--backend", "transformers", "--model", str(served["model"]), "--no-cache"]
    argv += ["--num-workers", "0", "--candidates", str(tmp_path / "pools.json"), "-o", str(out), *map(str, options)]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_a_query_subset_reads_only_its_queries_and_their_pools(tmp_path, served, range_server, capsys):
    chosen = list(served["pools"])[3:8]
    (tmp_path / "ids.txt").write_text("\n".join(chosen) + "\n")
    range_server.reset()
    run = retrieve(
        tmp_path,
        served,
        "subset.json",
        "--data-dir",
        served["data"],
        "--images-dir",
        served["url"],
        "--query-ids",
        f"@{tmp_path / 'ids.txt'}",
    )
    err = capsys.readouterr().err
    assert "Not scored: the run holds 5 of the 30 queries (--queries, --query-ids)" in err

    query_image, screenshot = images_of(served["data"])
    expected = {
        "challenge_data": {query_image[qid] for qid in chosen},
        "challenge_passage": {screenshot[pid] for qid in chosen for pid in served["pools"][qid]},
    }
    assert whole_part_gets(range_server) == []
    for config, archive in archives(served["served"]).items():
        touched, _ = archive.read(range_server.requests)
        assert touched == expected[config], config

    # The same rankings as a run of every query over the whole corpus, from the same archives on disk.
    local = local_copy(served, tmp_path / "local")
    whole = {entry["qid"]: entry["ranked"] for entry in retrieve(tmp_path, served, "whole.json", "--data-dir", local)}
    assert [entry["qid"] for entry in run] == chosen
    for entry in run:
        assert [r["did"] for r in entry["ranked"]] == [r["did"] for r in whole[entry["qid"]]]
        np.testing.assert_allclose(
            [r["score"] for r in entry["ranked"]], [r["score"] for r in whole[entry["qid"]]], atol=1e-5
        )

    # The record holds the subset, and rerun repeats it.
    meta = json.loads((tmp_path / "subset.json.meta.json").read_text())
    assert meta["options"]["query_ids"] == chosen and meta["data"]["queries"]["count"] == 5
    assert meta["options"]["data"]["images_dir"] == served["url"]
    capsys.readouterr()
    assert main(["rerun", str(tmp_path / "subset.json.meta.json")]) == 0
    assert "The repeated run is identical to the recorded one, byte for byte." in capsys.readouterr().out


def test_the_first_n_queries(tmp_path, served, range_server, capsys):
    range_server.reset()
    run = retrieve(
        tmp_path, served, "first.json", "--data-dir", served["data"], "--images-dir", served["url"], "--queries", 4
    )
    assert [entry["qid"] for entry in run] == list(served["pools"])[:4]
    touched, _ = archives(served["served"])["challenge_data"].read(range_server.requests)
    assert len(touched) == 4


def test_the_feed_keeps_the_requests_asked_in_flight(tmp_path, served, range_server):
    """Each batch's images are read at once in the workers (here the main process: --num-workers 0)."""
    range_server.reset()
    range_server.hold_until(8, "Web_Image.zip", patience=1)
    retrieve(
        tmp_path, served, "run.json", "--data-dir", served["data"], "--images-dir", served["url"], "--max-requests", 8
    )
    assert range_server.max_in_flight("Web_Image.zip") == 8  # from the server's log of starts and ends
    query_image, screenshot = images_of(served["data"])
    touched, _ = archives(served["served"])["challenge_passage"].read(range_server.requests)
    assert touched == {screenshot[pid] for pool in served["pools"].values() for pid in pool}


def test_an_unknown_query_id_is_one_line(tmp_path, served, capsys):
    argv = ["retrieve", "m2kr", "--data-dir", str(served["data"]), "--model", str(served["model"]), "--backend"]
    argv += ["transformers", "--images-dir", served["url"], "--query-ids", "4100,nope", "-o", str(tmp_path / "x.json")]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "mmrhub retrieve: error: --query-ids: 'nope' not in the challenge_data table's question_id (30 queries); "
        "give ids of that column."
    )


def test_tables_and_images_on_the_hub(tmp_path, served, hub_server, monkeypatch, capsys):
    """``--data-dir hf://...`` with ``--images-dir hf://...``: the run is written from the Hub's tables and the
    images read in place; scoring reads a local folder, so the run is left unscored and a line says how to score."""
    monkeypatch.setattr("datasets.config.HF_ENDPOINT", hub_server.url)
    monkeypatch.setattr("datasets.config.HF_HUB_OFFLINE", False)
    hub_server.add_repo("org/m2kr-tables", served["data"])
    hub_server.add_repo("Jingbiao/M2KR-Challenge", served["served"])
    hub_server.reset()
    tables_url, images_url = "hf://datasets/org/m2kr-tables", "hf://datasets/Jingbiao/M2KR-Challenge"
    run = retrieve(tmp_path, served, "hub.json", "--data-dir", tables_url, "--images-dir", images_url)
    assert [entry["qid"] for entry in run] == list(served["pools"])
    err = capsys.readouterr().err
    assert f"Not scored: the judgment tables are read from {tables_url}, and scoring reads a local folder" in err
    assert whole_part_gets(hub_server) == []
    meta = json.loads((tmp_path / "hub.json.meta.json").read_text())
    assert meta["data"]["folder"] == tables_url and meta["data"]["tables"] == {}


def test_rerank_reads_only_the_pools_members(tmp_path, served, range_server, capsys):
    """``mmrhub rerank m2kr --images-dir URL``: each query's image and its pool's screenshots, nothing else."""
    pytest.importorskip("sentence_transformers")
    from tiny_models import build_tiny_llava_reranker

    model = build_tiny_llava_reranker(tmp_path / "reranker")
    range_server.reset()
    argv = ["rerank", "m2kr", "--data-dir", str(served["data"]), "--images-dir", served["url"], "--model", str(model)]
    argv += ["--candidates", str(tmp_path / "pools.json"), "--top-n", "2", "--num-workers", "0", "--no-cache"]
    assert main([*argv, "-o", str(tmp_path / "reranked.json")]) == 0, capsys.readouterr().err
    query_image, screenshot = images_of(served["data"])
    expected = {
        "challenge_data": set(query_image.values()),
        "challenge_passage": {screenshot[pid] for pool in served["pools"].values() for pid in pool[:2]},
    }
    assert whole_part_gets(range_server) == []
    for config, archive in archives(served["served"]).items():
        touched, _ = archive.read(range_server.requests)
        assert touched == expected[config], config


def test_workers_inherit_where_the_hub_sends_each_part(tmp_path, hub_server, monkeypatch):
    """The feed's forked workers read from the CDN URLs their parent resolved: one redirect per part in all."""
    from _remote_m2kr import remote_m2kr as served_m2kr

    from mmrhub.benchmarks import BENCHMARKS
    from mmrhub.retrieve.data_loading import Items
    from mmrhub.retrieve.data_loading import load_side
    from mmrhub.retrieve.data_loading import loader
    from mmrhub.retrieve.options import DataOptions

    monkeypatch.setattr("datasets.config.HF_ENDPOINT", hub_server.url)
    remote = served_m2kr(tmp_path / "hub", hub_server, queries=8, passages=90, screenshot_kb=20, hub=True)
    hub_server.reset()
    side = load_side(DataOptions(BENCHMARKS["m2kr"], str(remote["data"]), None, remote["url"]), "corpus")
    rows = [row for batch in loader(Items(side.dataset, side.table), list, 16, 2, False) for row in batch]
    assert len(rows) == 90 and all(row.image.width > 0 for row in rows)
    resolves = [r.path.rsplit("/", 1)[1] for r in hub_server.requests if "/resolve/" in r.path]
    assert sorted(resolves) == ["Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003"]
    touched, _ = archives(remote["served"])["challenge_passage"].read(hub_server.requests)
    assert len(touched) == 90
