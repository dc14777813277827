"""``mmrhub report m2kr --images-dir URL``: the archives read in place over HTTP (a loopback server with Range),
only the members of the thumbnails shown, counted in requests and bytes."""

import os

import pytest
from _remote_m2kr import archive_files_under
from _remote_m2kr import archive_gets
from _remote_m2kr import archives
from _remote_m2kr import images_of
from _remote_m2kr import remote_m2kr
from _remote_m2kr import tables
from _remote_m2kr import whole_part_gets
from _remote_m2kr import write_run
from _report_helpers import Page
from _report_helpers import run_report

pytest.importorskip("matplotlib")

SHOWN = 20


@pytest.mark.parametrize("where", ["http", "hub"])
def test_a_20_query_report_reads_only_its_thumbnails_members(where, tmp_path, request, monkeypatch, capsys):
    range_server = request.getfixturevalue("hub_server" if where == "hub" else "range_server")
    if where == "hub":  # datasets reads HF_ENDPOINT once, at import, for the storage options it passes on
        monkeypatch.setattr("datasets.config.HF_ENDPOINT", range_server.url)
    remote = remote_m2kr(tmp_path, range_server, hub=where == "hub")
    run = tmp_path / "run.json"
    ranked = write_run(remote["data"], run, failing=SHOWN)  # the 20 worst queries are the first 20
    out = tmp_path / "report.html"
    range_server.reset()
    code = run_report(
        "m2kr", run, "--data-dir", remote["data"], "--images-dir", remote["url"], "--queries", SHOWN, "-o", out
    )
    assert code == 0, capsys.readouterr().err
    page = Page(out.read_text(encoding="utf-8"))

    # What the gallery shows: the 20 failing queries, each with its top 5 and its missed positives.
    positives = {row["question_id"]: row["pos_item_ids"] for row in tables(remote["data"])["challenge_answers"]}
    failing = list(ranked)[:SHOWN]
    assert sorted(page.queries) == sorted(failing)
    query_image, screenshot = images_of(remote["data"])
    expected = {
        "challenge_data": {query_image[qid] for qid in failing},
        "challenge_passage": {screenshot[pid] for qid in failing for pid in ranked[qid] + positives[qid]},
    }
    assert len(page.images) == len(failing) + sum(len(ranked[q]) + len(positives[q]) for q in failing)
    assert page.placeholders == []

    # Only those members were read, each once, in one range request each; the directories once.
    assert whole_part_gets(range_server) == []
    moved = 0
    for config, archive in archives(remote["served"]).items():
        touched, directory = archive.read(range_server.requests)
        assert touched == expected[config], config
        # the directory read once: its end probed, and the directory before the probe read if it is longer
        assert len(directory) == len(set(directory)) <= 2, (config, directory)
        sent = sum(range_server.sent(f"/{part}") for part in archive.parts)
        assert sent - sum(size for _, size in directory) <= 1.2 * archive.member_bytes(touched), config
        moved += sent
    requests = [r for r in archive_gets(range_server) if r.range]
    assert len(requests) <= sum(map(len, expected.values())) + 2 * len(expected)  # a member a request
    assert moved < sum(p.stat().st_size for p in remote["served"].iterdir()) / 4

    # Nothing of the archives was written anywhere: not in the datasets cache, not beside the page.
    assert archive_files_under(os.environ["HF_HOME"], remote["served"]) == []
    assert archive_files_under(tmp_path / "data", remote["served"]) == []


def test_a_report_keeps_requests_in_flight_and_a_warm_one_reads_no_image(tmp_path, range_server, monkeypatch, capsys):
    import fsspec

    import m2kr_archive
    from mmrhub.cli import main

    remote = remote_m2kr(tmp_path, range_server)
    run = tmp_path / "run.json"
    write_run(remote["data"], run, failing=SHOWN)
    argv = ["report", "m2kr", str(run), "--data-dir", str(remote["data"]), "--images-dir", remote["url"]]
    argv += ["--queries", str(SHOWN), "--max-requests", "8", "-o", str(tmp_path / "report.html")]
    range_server.reset()
    range_server.hold_until(8, "Web_Image.zip", patience=1)
    assert main(argv) == 0, capsys.readouterr().err
    assert range_server.max_in_flight("Web_Image.zip") == 8  # from the server's log of starts and ends
    first = Page((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert first.placeholders == [] and len(first.images) > SHOWN

    # Again, as a new process: the zip directories come from $HF_HOME, the thumbnails from their cache.
    monkeypatch.setattr(m2kr_archive, "_ARCHIVES", {})
    monkeypatch.setattr(m2kr_archive, "_STATES", {})
    fsspec.AbstractFileSystem.clear_instance_cache()
    m2kr_archive.SplitZipFileSystem.clear_instance_cache()
    range_server.reset()
    assert main(argv) == 0, capsys.readouterr().err
    assert range_server.gets() == []  # no image, no directory: HEADs only
    again = Page((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert again.images == first.images
