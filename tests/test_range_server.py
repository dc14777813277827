"""The loopback server the remote-reading tests count requests and bytes with (tests/helpers/_range_server.py)."""

import http.client
import io
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor

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


def raw(url, method="GET", headers=None, timeout=10):
    """(status, headers, body) of one request, redirects not followed."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request(method, parts.path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.headers), response.read()
    finally:
        connection.close()


def test_requests_in_flight_come_from_the_log_of_starts_and_ends(range_server):
    (range_server.root / "f.bin").write_bytes(bytes(range(256)) * 64)
    url = range_server.file_url("f.bin")
    range_server.delay = 0.05
    for start in range(0, 3000, 1000):  # one after another
        fetch(url, headers={"Range": f"bytes={start}-{start + 99}"})
    assert range_server.max_in_flight("f.bin") == 1
    range_server.reset()
    range_server.hold_until(6, "f.bin")
    with ThreadPoolExecutor(6) as pool:  # six at once
        bodies = list(pool.map(lambda s: fetch(url, headers={"Range": f"bytes={s}-{s + 9}"})[2], range(0, 60, 10)))
    assert bodies == [bytes(range(s, s + 10)) for s in range(0, 60, 10)]
    assert range_server.max_in_flight("f.bin") == 6
    assert all(r.end > r.start for r in range_server.requests)
    assert range_server.mean_in_flight("f.bin") > 1


def test_faults_on_demand(range_server):
    (range_server.root / "f.bin").write_bytes(bytes(range(256)) * 64)
    url = range_server.file_url("f.bin")
    range_server.range_end_ignored = True
    status, headers, body = raw(url, headers={"Range": "bytes=100-199"})
    assert (status, headers["Content-Range"], len(body)) == (206, "bytes 100-16383/16384", 16284)
    range_server.range_end_ignored = False
    range_server.cut_after = 30
    with pytest.raises(http.client.IncompleteRead):
        raw(url, headers={"Range": "bytes=100-199"})
    range_server.cut_after = None
    range_server.stall_after = 10
    with pytest.raises(TimeoutError):
        raw(url, headers={"Range": "bytes=100-199"}, timeout=0.3)
    range_server.stall_after = None
    range_server.redirect_loop = True
    status, headers, _ = raw(url, headers={"Range": "bytes=0-9"})
    assert (status, headers["Location"]) == (302, "/files/f.bin")
    assert raw(url)[0] == 200  # the loop is for range requests only
    range_server.redirect_loop = False
    range_server.etag_mode = "per-answer"
    assert len({raw(url, "HEAD")[1]["ETag"] for _ in range(3)}) == 3
    range_server.etag_mode = "weak-ranges"
    tag = raw(url, "HEAD")[1]["ETag"]
    assert raw(url, headers={"Range": "bytes=0-9"})[1]["ETag"] == "W/" + tag


def test_the_hub_redirects_to_cdn_urls_that_expire(hub_server, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    split_zip(repo, MEMBERS)
    sha = hub_server.add_repo("Jingbiao/M2KR-Challenge", repo)
    resolve = f"{hub_server.url}/datasets/Jingbiao/M2KR-Challenge/resolve/{sha}/Web_Image.zip.002"
    status, headers, _ = raw(resolve, "HEAD")
    size = (repo / "Web_Image.zip.002").stat().st_size
    assert (status, headers["X-Repo-Commit"], headers["X-Linked-Size"]) == (302, sha, str(size))
    location = headers["Location"]
    assert location.startswith(hub_server.cdn_url + "/cdn/") and hub_server.cdn_url != hub_server.url
    status, headers, body = raw(location, headers={"Range": "bytes=7-11"})
    assert (status, body) == (206, (repo / "Web_Image.zip.002").read_bytes()[7:12])
    hub_server.expire_cdn()
    assert raw(location, headers={"Range": "bytes=7-11"})[0] == 403
    fresh = raw(resolve, "HEAD")[1]["Location"]
    assert fresh != location and raw(fresh, headers={"Range": "bytes=7-11"})[0] == 206
    assert [r.host for r in hub_server.requests] == ["hub", "cdn", "cdn", "hub", "cdn"]
