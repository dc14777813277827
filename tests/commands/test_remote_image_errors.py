"""What a command says when remote archives cannot be read in place: one line naming the part and what to do, for a
server without Range support (the part would be downloaded whole: stopped unless --download-archives), a missing
part (404), the Hub offline, and a part changed on its server between its directory and its members."""

import os

import pytest
from _remote_m2kr import remote_m2kr
from _remote_m2kr import whole_part_gets

from mmrhub.cli import main


def error_line(capsys) -> str:
    """The command's own error line on stderr (datasets' progress bars and its progress lines aside), checked to be
    its only one."""
    lines = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("mmrhub ") and ": error: " in line
    ]
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def export(tmp_path, remote, images_dir, *options) -> int:
    argv = ["export", "m2kr", str(tmp_path / "out"), "--data-dir", str(remote["data"]), "--images-dir", images_dir]
    return main([*argv, *options])


@pytest.fixture
def remote(tmp_path, range_server):
    # query images of 40 KB: their archive is larger than the reader's probe of its end, which would hold them all
    return remote_m2kr(tmp_path, range_server, queries=8, passages=30, screenshot_kb=20, query_image_kb=40)


def test_a_server_without_ranges_stops_before_downloading_a_part(tmp_path, remote, range_server, capsys):
    range_server.ranges = False
    assert export(tmp_path, remote, remote["url"]) == 1
    line = error_line(capsys)
    assert line.startswith(f"mmrhub export: error: {remote['url']}/")
    assert "the server ignores range requests" in line and "would download this" in line
    assert "pass --download-archives to download the parts whole" in line and "download_archives=" not in line
    assert not (tmp_path / "out").exists()
    # it answered one range request with a whole part, which the reader stopped reading
    assert len(whole_part_gets(range_server)) == 0 and range_server.sent() < 3 * (1 << 20)


def test_download_archives_downloads_them_when_asked(tmp_path, remote, range_server, monkeypatch, capsys):
    monkeypatch.setattr("datasets.config.HF_HUB_OFFLINE", False)  # datasets downloads nothing offline
    range_server.ranges = False
    assert export(tmp_path, remote, remote["url"], "--download-archives") == 0, capsys.readouterr().err
    parts = {p.name: p.stat().st_size for p in remote["served"].iterdir()}
    fetched = {r.path.rsplit("/", 1)[-1] for r in range_server.gets() if r.sent == parts.get(r.path.rsplit("/", 1)[-1])}
    assert fetched == set(parts)  # every part downloaded whole, as asked


def test_a_missing_part_is_one_line(tmp_path, remote, capsys):
    assert export(tmp_path, remote, remote["url"] + "-elsewhere") == 1
    line = error_line(capsys)
    assert line.startswith("mmrhub export: error: ") and line.endswith(".")
    assert f"{remote['url']}-elsewhere/query_images.zip" in line and "404 Not Found" in line


def test_the_hub_offline_is_one_line(tmp_path, remote, capsys):
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert export(tmp_path, remote, "hf://datasets/Jingbiao/M2KR-Challenge") == 1
    assert error_line(capsys) == (
        "mmrhub export: error: hf://datasets/Jingbiao/M2KR-Challenge is on the Hub, but the Hub is offline "
        "(HF_HUB_OFFLINE is set); unset HF_HUB_OFFLINE, or pass a local folder holding the files."
    )


def test_a_part_changed_between_directory_and_members_is_one_line(tmp_path, remote, monkeypatch, capsys):
    from mmrhub.export import parquet

    real, part = parquet.read_many, remote["served"] / "query_images.zip"

    def read_after_a_change(paths, on_error="raise"):
        status = part.stat()  # the server's ETag follows the file's modification time
        os.utime(part, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))
        return real(paths, on_error)

    monkeypatch.setattr(parquet, "read_many", read_after_a_change)
    assert export(tmp_path, remote, remote["url"]) == 1
    line = error_line(capsys)
    assert line.startswith(f"mmrhub export: error: {remote['url']}/query_images.zip changed on the server since its")
    assert line.endswith("load it again to read the new version.")


def test_a_stalled_server_is_one_line_naming_the_part_and_the_flag(tmp_path, remote, range_server, capsys):
    range_server.stall_after = 10
    assert export(tmp_path, remote, remote["url"], "--read-timeout", "0.5") == 1
    line = error_line(capsys)
    assert line.startswith(
        f"mmrhub export: error: {remote['url']}/query_images.zip: no byte came from the server for 0.5 s"
    )
    assert line.endswith("allow a longer wait with --read-timeout SECONDS.") and "read_timeout=" not in line
    assert "MMRHUB_READ_TIMEOUT" not in os.environ  # the flag holds for the command only


def test_etags_that_change_with_every_answer_name_the_flag_that_accepts_them(tmp_path, remote, range_server, capsys):
    range_server.etag_mode = "per-answer"
    assert export(tmp_path, remote, remote["url"]) == 1
    line = error_line(capsys)
    assert "a different ETag from one answer to the next" in line and line.endswith(
        "pass --no-etag-check to rely on each part's size and each member's CRC-32 instead."
    )
    assert export(tmp_path, remote, remote["url"], "--no-etag-check") == 0, capsys.readouterr().err


@pytest.mark.parametrize("url", ["ftp://host/m2kr", "s3://bucket/m2kr"])
def test_an_images_dir_read_in_place_nowhere_is_one_line(tmp_path, remote, url, capsys):
    assert export(tmp_path, remote, url) == 1
    assert error_line(capsys).startswith(
        f"mmrhub export: error: images_dir {url}: the archives are read in place from a local folder, an http(s)://"
    )


def test_a_report_against_a_server_without_ranges_stops_with_the_readers_line(tmp_path, remote, range_server, capsys):
    from _remote_m2kr import write_run

    run = tmp_path / "run.json"
    write_run(remote["data"], run, failing=4)
    argv = ["report", "m2kr", str(run), "--data-dir", str(remote["data"]), "--images-dir", remote["url"]]
    argv += ["--queries", "4", "-o", str(tmp_path / "page.html")]
    range_server.ranges = False
    assert main(argv) == 1
    line = error_line(capsys)
    assert line.startswith(f"mmrhub report: error: {remote['url']}/")
    assert "the server ignores range requests" in line and "pass --download-archives" in line
    assert "not found" not in line and "--no-check-images" not in line and not (tmp_path / "page.html").exists()
    # what it offers works as the tests run, with HF_HUB_OFFLINE=1
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert main([*argv, "--download-archives"]) == 0, capsys.readouterr().err
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "could not be shown" not in page and page.count("data:image/jpeg;base64,") > 4
