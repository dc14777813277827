"""M2KR's archives read at the Hub's speed: many range requests in flight (proven from the loopback server's own
log of request starts and ends), one redirect per part over ``hf://`` and one request per member, a new redirect
after the CDN's URL expires, and a stalled server ended by the read timeout in one line."""

import hashlib
import time

import pytest
from _remote_m2kr import archives
from _remote_m2kr import remote_m2kr

import m2kr
import m2kr_archive
import mmr_remote
from mmr_remote import RemoteReadError

N = 8  # requests in flight asked for


pytestmark = pytest.mark.usefixtures("fresh_process")


@pytest.fixture
def remote(tmp_path, range_server):
    return remote_m2kr(tmp_path, range_server, queries=16, passages=120, screenshot_kb=30)


def load(remote, tmp_path, config="challenge_passage", **kwargs):
    return m2kr.load(
        config, data_dir=str(remote["data"]), images_dir=remote["url"], cache_dir=str(tmp_path / "c"), **kwargs
    )


def pixels(image) -> tuple:
    return image.size, hashlib.sha256(image.tobytes()).hexdigest()


def member_gets(server) -> list:
    """The range GETs of the screenshot parts (on the Hub, of the CDN URLs they redirect to)."""
    return [r for r in server.gets("Web_Image.zip") if r.range]


@pytest.mark.parametrize("streaming", [False, True])
def test_the_documented_loop_keeps_n_requests_in_flight(remote, range_server, tmp_path, streaming):
    dataset = load(remote, tmp_path)  # the directory read, and the reference rows prepared
    range_server.reset()
    expected = [pixels(row["image"]) for row in dataset]  # the plain loop: one image at a time
    assert range_server.max_in_flight("Web_Image.zip") <= 2  # one member at a time (two parts for one astride)

    rows = load(remote, tmp_path, streaming=streaming, max_requests=N)
    range_server.reset()
    range_server.hold_until(N, "Web_Image.zip")
    got = [pixels(row["image"]) for row in m2kr.read_ahead(rows)]
    assert got == expected  # the same images, in the same order
    assert range_server.max_in_flight("Web_Image.zip") == N  # never more than asked, and that many at once
    # each member's bytes moved once, in no more requests than members
    archive = archives(remote["served"])["challenge_passage"]
    touched, _ = archive.read(range_server.requests)
    assert touched == set(archive.spans) and len(member_gets(range_server)) <= len(archive.spans)
    assert range_server.sent("Web_Image.zip") <= 1.02 * archive.member_bytes(touched)


def test_the_bound_follows_the_bandwidth_delay_rule():
    assert mmr_remote.requests_in_flight(2.6e6) == 20  # M2KR's mean screenshot: 50 MB in flight
    assert mmr_remote.requests_in_flight(100e6) == mmr_remote.MIN_REQUESTS
    assert mmr_remote.requests_in_flight(40e3) == mmr_remote.MAX_REQUESTS
    with mmr_remote.settings(max_requests=3):
        assert mmr_remote.requests_in_flight(2.6e6) == 3
    assert mmr_remote.requests_in_flight(2.6e6) == 20
    with pytest.raises(ValueError, match=r"max_requests=0: expected a whole number of requests from 1 to 1024\."):
        mmr_remote.configure(max_requests=0)


def test_reads_are_planned_in_archive_order_with_at_least_the_bound_in_flight(monkeypatch):
    spans = [(index * 1000, index * 1000 + 990) for index in range(40)]  # neighbours 10 bytes apart
    monkeypatch.setenv("MMRHUB_MAX_REQUESTS", "8")
    reads = m2kr_archive.plan_reads(spans)
    assert len(reads) == 8 and [i for _, _, members in reads for i in members] == list(range(40))
    assert all(start == spans[members[0]][0] and end == spans[members[-1]][1] for start, end, members in reads)
    monkeypatch.setenv("MMRHUB_MAX_REQUESTS", "64")
    assert len(m2kr_archive.plan_reads(spans)) == 40  # more requests than spans: one span a read
    far = [(index * 10**6, index * 10**6 + 990) for index in range(4)]
    monkeypatch.setenv("MMRHUB_MAX_REQUESTS", "1")
    assert len(m2kr_archive.plan_reads(far)) == 4  # gaps of a megabyte are never read


def test_hf_resolves_each_part_once_and_reads_each_member_with_one_request(tmp_path, hub_server, monkeypatch):
    monkeypatch.setattr("datasets.config.HF_ENDPOINT", hub_server.url)
    remote = remote_m2kr(tmp_path, hub_server, queries=16, passages=120, screenshot_kb=30, hub=True)
    hub_server.reset()
    dataset = load(remote, tmp_path, max_requests=N)  # the parts' blob ids, the commit, the directory
    images = [pixels(row["image"]) for row in m2kr.read_ahead(dataset)]
    assert len(images) == 120
    archive = archives(remote["served"])["challenge_passage"]
    resolves = [r for r in hub_server.requests if "/resolve/" in r.path]
    # one redirect per part in the whole process, from the Hub, and every range read from the CDN's URL
    assert sorted(r.path.rsplit("/", 1)[1] for r in resolves) == archive.parts
    assert all((r.method, r.status) == ("HEAD", 302) for r in resolves)
    cdn = member_gets(hub_server)
    assert cdn and all(r.host == "cdn" and "/cdn/" in r.path for r in cdn)
    touched, directory = archive.read(hub_server.requests)
    assert touched == set(archive.spans)
    assert len(cdn) - len(directory) <= len(archive.spans)  # the members' count at most (neighbours may share)
    parts_requests = [r for r in hub_server.requests if "Web_Image.zip" in r.path]
    assert len(parts_requests) <= len(archive.spans) + 2 * len(archive.parts)
    assert hub_server.max_in_flight("/cdn/") > 1

    # The CDN's URLs expire: each part is resolved again once, on its next read.
    hub_server.expire_cdn()
    hub_server.reset()
    again = dataset.select(range(0, 120, 30))
    assert [pixels(row["image"]) for row in again] == images[::30]
    resolves = [r for r in hub_server.requests if "/resolve/" in r.path]
    refused = [r for r in hub_server.requests if r.status == 403]
    parts_read = {r.path.rsplit("/", 1)[1] for r in member_gets(hub_server) if r.status == 206}
    assert len(resolves) == len(parts_read) and len(refused) == len(parts_read)


def test_a_stalled_server_ends_within_the_read_timeout_in_one_line(remote, range_server, tmp_path):
    dataset = load(remote, tmp_path, read_timeout=0.5)
    range_server.stall_after = 10  # 10 bytes of each answer's body, then nothing
    with pytest.raises(RemoteReadError) as caught:
        dataset[3]["image"]
    message = str(caught.value)
    assert "\n" not in message and message.startswith(remote["url"] + "/Web_Image.zip.00")
    assert "no byte came from the server for 0.5 s after 10 of the " in message
    assert "read_timeout= (--read-timeout SECONDS)" in message
    stalled = member_gets(range_server)[-1]
    assert stalled.sent == 10 and hung_up(stalled)


def hung_up(request, seconds: float = 10.0) -> bool:
    """Whether the server logs the request's end (the client hung up) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while request.end is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return request.end is not None


def test_a_stall_while_the_directory_is_read_ends_too(remote, range_server, tmp_path):
    range_server.stall_after = 10
    with pytest.raises(RemoteReadError, match=r"no byte came from the server for 0\.5 s after 10 of the"):
        load(remote, tmp_path, read_timeout=0.5)
    assert all(hung_up(r) for r in range_server.requests)
