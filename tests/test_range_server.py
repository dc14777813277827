"""The loopback server the remote-reading tests count requests and bytes with (tests/_range_server.py)."""

import io
import urllib.error
import urllib.request
import zipfile

import pytest
from _range_server import member_spans
from _range_server import split_zip
from _range_server import zip64_bytes

MEMBERS = [(f"Web_Image/{index:03d}.png", bytes([index]) * (500 + index)) for index in range(40)]


def fetch(url, method="GET", headers=None):
    with urllib.request.urlopen(urllib.request.Request(url, method=method, headers=headers or {})) as response:
        return response.status, dict(response.headers), response.read()


def test_ranges_etag_head_and_counts(range_server):
    (range_server.root / "f.bin").write_bytes(bytes(range(256)) * 4)
    url = range_server.file_url("f.bin")
    status, headers, body = fetch(url, headers={"Range": "bytes=10-19"})
    assert (status, headers["Content-Range"], body) == (206, "bytes 10-19/1024", bytes(range(10, 20)))
    status, headers, body = fetch(url, "HEAD")
    assert (status, headers["Content-Length"], headers["Accept-Ranges"], body) == (200, "1024", "bytes", b"")
    assert headers["ETag"].startswith('"400-')
    status, _, body = fetch(url, headers={"Range": "bytes=-4"})
    assert (status, body) == (206, bytes(range(252, 256)))
    assert [(r.method, r.range, r.status, r.sent) for r in range_server.requests] == [
        ("GET", "bytes=10-19", 206, 10),
        ("HEAD", None, 200, 0),
        ("GET", "bytes=-4", 206, 4),
    ]
    assert range_server.sent("f.bin") == 14


def test_without_ranges_and_404(range_server):
    (range_server.root / "f.bin").write_bytes(b"x" * 100)
    range_server.ranges = False
    status, headers, body = fetch(range_server.file_url("f.bin"), headers={"Range": "bytes=0-9"})
    assert (status, len(body), "Accept-Ranges" in headers) == (200, 100, False)
    with pytest.raises(urllib.error.HTTPError) as caught:
        fetch(range_server.file_url("missing.bin"))
    assert caught.value.code == 404


def test_hub_routes(hub_server, tmp_path):
    from huggingface_hub import HfFileSystem

    repo = tmp_path / "repo"
    repo.mkdir()
    split_zip(repo, MEMBERS)
    hub_server.add_repo("Jingbiao/M2KR-Challenge", repo)
    fs = HfFileSystem()
    assert fs.ls("datasets/Jingbiao/M2KR-Challenge", detail=False) == [
        f"datasets/Jingbiao/M2KR-Challenge/Web_Image.zip.00{index}" for index in (1, 2, 3)
    ]
    info = fs.info("datasets/Jingbiao/M2KR-Challenge/Web_Image.zip.002")
    assert info["size"] == (repo / "Web_Image.zip.002").stat().st_size and info["blob_id"]
    with fs.open("datasets/Jingbiao/M2KR-Challenge/Web_Image.zip.002", "rb", cache_type="none") as part:
        part.seek(7)
        assert part.read(5) == (repo / "Web_Image.zip.002").read_bytes()[7:12]
    assert [r.range for r in hub_server.gets("/resolve/")] == ["bytes=7-11"]
    with pytest.raises(FileNotFoundError):
        fs.info("datasets/Jingbiao/M2KR-Challenge/Web_Image.zip.004")


def test_split_zip_has_zip64_end_records(tmp_path):
    data = zip64_bytes(MEMBERS)
    end = data.rfind(b"PK\x05\x06")
    assert data[end - 20 : end - 16] == b"PK\x06\x07" and data[end - 76 : end - 72] == b"PK\x06\x06"
    parts = split_zip(tmp_path, MEMBERS)
    joined = b"".join(part.read_bytes() for part in parts)
    assert joined == data and len({part.stat().st_size for part in parts[:2]}) == 1
    with zipfile.ZipFile(io.BytesIO(joined)) as archive:
        assert [(info.filename, archive.read(info)) for info in archive.infolist()] == MEMBERS
    spans = member_spans(MEMBERS)
    start, end = spans["Web_Image/003.png"]
    assert joined[start : start + 4] == b"PK\x03\x04" and end - start == 30 + 17 + 20 + 503
