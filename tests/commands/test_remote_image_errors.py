"""What a command says when remote archives cannot be read in place: one line naming the part and what to do, for a
server without Range support (the part would be downloaded whole: stopped unless --download-archives), a missing
part (404), the Hub offline, and a part changed on its server between its directory and its members."""

import os

import pytest
from _remote_m2kr import remote_m2kr
from _remote_m2kr import whole_part_gets

from mmrhub.cli import main


def error_line(capsys) -> str:
    """The command's own line on stderr (datasets' progress bars aside), checked to be its only one."""
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("mmrhub ")]
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

    real, part = parquet.read_file, remote["served"] / "query_images.zip"

    def read_after_a_change(path, root):
        status = part.stat()  # the server's ETag follows the file's modification time
        os.utime(part, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))
        return real(path, root)

    monkeypatch.setattr(parquet, "read_file", read_after_a_change)
    assert export(tmp_path, remote, remote["url"]) == 1
    line = error_line(capsys)
    assert line.startswith(f"mmrhub export: error: {remote['url']}/query_images.zip changed on the server since its")
    assert line.endswith("load it again to read the new version.")
