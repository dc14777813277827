"""Every way a remote archive can fail, said in one line naming the part or member and what to do: answers cut
short, longer than asked or redirected in a loop, ETags that change from one answer to the next, a directory
pointing past the members, an unreadable or mistaken ``images_dir``, a cut or changed download, a ``zip -s``
archive renamed into parts, and ids given twice."""

import logging
import shutil
import struct
import subprocess
import zipfile

import pytest
from _remote_m2kr import archives
from _remote_m2kr import remote_m2kr

import m2kr
from m2kr import M2krDataError
from mmr_remote import RemoteReadError

pytestmark = pytest.mark.usefixtures("fresh_process")


@pytest.fixture
def remote(tmp_path, range_server):
    return remote_m2kr(tmp_path, range_server, queries=8, passages=40, screenshot_kb=20)


def load(remote, tmp_path, config="challenge_passage", images_dir=None, **kwargs):
    images_dir = remote["url"] if images_dir is None else images_dir
    return m2kr.load(
        config, data_dir=str(remote["data"]), images_dir=images_dir, cache_dir=str(tmp_path / "c"), **kwargs
    )


def one_line(caught) -> str:
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_an_answer_cut_short_is_one_line(remote, range_server, tmp_path):
    dataset = load(remote, tmp_path)
    range_server.cut_after = 100
    with pytest.raises(RemoteReadError) as caught:
        dataset[5]["image"]
    message = one_line(caught)
    assert message.startswith(remote["url"] + "/Web_Image.zip.00")
    assert "the server stopped sending after 100 of the " in message and "(the connection closed mid-answer)" in message


def test_an_answer_longer_than_asked_is_one_line(remote, range_server, tmp_path):
    dataset = load(remote, tmp_path)
    range_server.range_end_ignored = True  # each answer runs to the end of the part
    with pytest.raises(RemoteReadError) as caught:
        dataset[5]["image"]
    message = one_line(caught)
    assert (
        "the server answered a request for bytes " in message and "it does not serve ranges exactly as asked" in message
    )
    assert "shorter" not in message
    gets = [r for r in range_server.gets("Web_Image") if r.status == 206]
    part = remote["served"] / gets[-1].path.rsplit("/", 1)[1]
    assert gets[-1].sent < part.stat().st_size  # it hung up on the answer


def test_a_redirect_loop_is_one_line(remote, range_server, tmp_path):
    dataset = load(remote, tmp_path)
    range_server.redirect_loop = True
    with pytest.raises(RemoteReadError) as caught:
        dataset[5]["image"]
    message = one_line(caught)
    assert message.startswith(remote["url"] + "/Web_Image.zip.00")
    assert "the server redirected the request more than 10 times (a redirect loop)" in message


def test_etags_that_change_with_every_answer_say_what_to_pass(remote, range_server, tmp_path):
    range_server.etag_mode = "per-answer"
    with pytest.raises(RemoteReadError) as caught:
        load(remote, tmp_path)
    message = one_line(caught)
    assert "the server gives the same file a different ETag from one answer to the next" in message
    assert "loading again would not help; pass check_etags=False (--no-etag-check)" in message
    dataset = load(remote, tmp_path, check_etags=False)
    assert dataset[5]["image"].size == dataset[5]["image"].size and len(list(m2kr.read_ahead(dataset))) == 40


def test_weak_etags_on_range_answers_are_the_same_version(remote, range_server, tmp_path):
    range_server.etag_mode = "weak-ranges"  # W/"x" on a range answer, "x" on the HEAD
    dataset = load(remote, tmp_path)
    assert len([row["image"] for row in m2kr.read_ahead(dataset)]) == 40


def test_a_directory_pointing_past_the_members_is_one_line(remote, tmp_path):
    archive = remote["served"] / "query_images.zip"
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as opened:
        start = opened.start_dir
    second = data.index(b"PK\x01\x02", start + 4)  # the second member's entry in the directory
    struct.pack_into("<L", data, second + 42, start + 1000)  # its local header's offset
    archive.write_bytes(bytes(data))
    with pytest.raises(M2krDataError) as caught:
        load(remote, tmp_path, "challenge_data")
    message = one_line(caught)
    assert message.startswith(remote["url"] + "/query_images.zip: member 'query_images/")
    assert f"puts its local header at byte {start + 1000:,}, past the end of the members" in message


@pytest.mark.parametrize("url", ["ftp://host/m2kr", "s3://bucket/m2kr", "zip://a::b.zip"])
def test_an_images_dir_that_cannot_be_read_in_place_is_one_line(remote, tmp_path, url):
    with pytest.raises(M2krDataError) as caught:
        load(remote, tmp_path, images_dir=url)
    message = one_line(caught)
    assert message.startswith(f"images_dir {url}: the archives are read in place from a local folder, an http(s)://")
    assert "copy them to a local folder, or serve them over https://." in message


def test_an_images_dir_naming_the_archive_itself_is_one_line(remote, tmp_path):
    with pytest.raises(M2krDataError) as caught:
        load(remote, tmp_path, images_dir=remote["url"] + "/Web_Image.zip.001")
    assert one_line(caught).startswith(
        f"images_dir {remote['url']}/Web_Image.zip.001 names the archive Web_Image.zip.001 itself; pass the folder "
        f"holding the archives (Web_Image.zip.001, Web_Image.zip.002, Web_Image.zip.003, query_images.zip): "
        f"images_dir='{remote['url']}'"
    )
    local = remote["served"] / "query_images.zip"
    with pytest.raises(M2krDataError, match=r"names the archive query_images\.zip itself; pass the folder holding"):
        load(remote, tmp_path, "challenge_data", images_dir=str(local))


def test_a_download_cut_short_is_never_kept(remote, range_server, tmp_path):
    range_server.cut_after = 5000
    with pytest.raises(RemoteReadError) as caught:
        load(remote, tmp_path, "challenge_data", download_archives=True)
    assert "the download stopped at 5,000 of its " in one_line(caught) and "nothing was kept" in str(caught.value)
    kept = [p for p in (tmp_path / "hf" / "mmrhub" / "archives").rglob("*") if p.is_file()]
    assert kept == []
    range_server.cut_after = None
    dataset = load(remote, tmp_path, "challenge_data", download_archives=True)
    range_server.reset()
    again = load(remote, tmp_path / "again", "challenge_data", download_archives=True)
    assert range_server.gets() == []  # the whole, checked download is reused: HEADs only
    assert [row["image"].size for row in again] == [row["image"].size for row in dataset]


def test_a_download_of_a_changed_part_is_never_kept(remote, range_server, tmp_path):
    range_server.etag_mode = "per-answer"  # the GET's ETag is not the HEAD's
    with pytest.raises(RemoteReadError) as caught:
        load(remote, tmp_path, "challenge_data", download_archives=True)
    assert "query_images.zip changed on the server since it was listed (ETag " in one_line(caught)
    assert "download again" in str(caught.value)
    assert not [p for p in (tmp_path / "hf" / "mmrhub" / "archives").rglob("*") if p.is_file()]


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs Info-ZIP's zip")
def test_a_multi_disk_zip_renamed_into_parts_names_the_format_and_the_fix(remote, tmp_path):
    screenshots = tmp_path / "unzipped"
    with zipfile.ZipFile(remote["served"] / "query_images.zip") as archive:
        archive.extractall(screenshots)
    subprocess.run(["zip", "-q", "-r", "-s", "64k", "out.zip", "."], cwd=screenshots, check=True)
    disks = sorted(screenshots.glob("out.z*"), key=lambda p: (p.suffix == ".zip", p.suffix))
    assert len(disks) == 3, disks  # out.z01, out.z02, out.zip
    images = tmp_path / "renamed"
    images.mkdir()
    for disk, part in zip(disks, ("Web_Image.zip.001", "Web_Image.zip.002", "Web_Image.zip.003")):
        shutil.copy(disk, images / part)
    with pytest.raises(M2krDataError) as caught:
        load(remote, tmp_path, images_dir=str(images))
    message = one_line(caught)
    assert "a multi-disk zip archive (made by zip -s; its end record names disk 3)" in message
    assert "zip -s 0 out.zip --out whole.zip" in message and "split -n 3 -a 3 --numeric-suffixes=1" in message


def test_ids_given_twice_are_said(remote, tmp_path, caplog):
    ids = [row for row in load(remote, tmp_path, check_images=False)["passage_id"][:3]]
    with caplog.at_level(logging.WARNING, logger="m2kr"):
        dataset = load(remote, tmp_path, ids=[ids[0], ids[1], ids[0], ids[2], ids[1]], check_images=False)
    assert dataset["passage_id"] == ids
    assert (
        f"ids=: 2 id(s) given more than once ('{ids[0]}', '{ids[1]}'); each row is loaded once, where its id first "
        "appears." in caplog.text
    )


def test_members_read_at_once_are_each_checked(remote, range_server, tmp_path):
    """A member whose bytes changed fails its CRC-32 in the batch read too, named; its neighbours are unharmed."""
    archive = archives(remote["served"])["challenge_passage"]
    dataset = load(remote, tmp_path, check_etags=False)
    name, (start, end) = sorted(archive.spans.items(), key=lambda item: item[1])[4]
    part = remote["served"] / archive.parts[0]
    data = bytearray(part.read_bytes())
    assert end <= len(data)
    data[end - 3] ^= 0xFF
    part.write_bytes(bytes(data))
    rows = m2kr.read_ahead(dataset)
    assert [row["image"].size for row in (next(rows) for _ in range(4))]
    with pytest.raises(M2krDataError, match=rf"member '{name}' has CRC-32 \w+ where the zip directory lists"):
        list(rows)
