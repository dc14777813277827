"""M2KR's archives read in place over HTTP and from the Hub: each scenario counts the requests and bytes a real
loopback server (tests/helpers/_range_server.py) sent, against the members' and the zip directory's bytes."""

import hashlib
import io
import shutil
import zipfile
from pathlib import Path

import datasets
import pytest
from _m2kr_helpers import PASSAGE_PARTS
from _m2kr_helpers import SAMPLE
from _m2kr_helpers import source_rows
from _m2kr_helpers import unsplit_zip
from _range_server import member_spans
from _range_server import split_zip
from _range_server import zip64_bytes

import m2kr
import m2kr_archive
from m2kr import M2krDataError
from mmr_remote import RemoteReadError

REPO = "Jingbiao/M2KR-Challenge"


def sample_members(archive: zipfile.ZipFile) -> list:
    return [(info.filename, archive.read(info)) for info in archive.infolist() if not info.is_dir()]


PASSAGE_MEMBERS = sample_members(unsplit_zip())
QUERY_MEMBERS = sample_members(zipfile.ZipFile(SAMPLE / "query_images.zip"))
SPANS = member_spans(PASSAGE_MEMBERS)


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch, tmp_path):
    """Each test starts as a new process would: no directory parsed yet, and its own HF_HOME."""
    monkeypatch.setattr(m2kr_archive, "_ARCHIVES", {})
    monkeypatch.setattr(m2kr_archive, "_STATES", {})
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def serve_images(folder: Path):
    """The sample's archives, rewritten with zip64 end records (as the real ones need), in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    split_zip(folder, PASSAGE_MEMBERS, PASSAGE_PARTS)
    (folder / "query_images.zip").write_bytes(zip64_bytes(QUERY_MEMBERS))
    return folder


@pytest.fixture
def tables(tmp_path):
    """The sample's tables alone: the archives are elsewhere."""
    folder = tmp_path / "tables"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("*.zip*", "baseline", "__pycache__"))
    return folder


@pytest.fixture
def served(range_server, tables):
    serve_images(range_server.root / "images")
    range_server.reset()
    return range_server


def directory_bytes(parts) -> int:
    """The zip directory and end records: from the directory's start to the archive's end."""
    data = b"".join(Path(part).read_bytes() for part in parts)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return len(data) - archive.start_dir


def load(config, tables, images_dir, tmp_path, **kwargs):
    return m2kr.load(config, data_dir=str(tables), images_dir=images_dir, cache_dir=str(tmp_path / "cache"), **kwargs)


def fingerprint(image):
    return image.size, hashlib.sha256(image.tobytes()).hexdigest()


def expected_images(config="challenge_passage"):
    dataset = m2kr.load(config)  # the bundled sample, read locally
    return {row[m2kr.ID_FIELDS[config]]: fingerprint(row["image"]) for row in dataset}


def no_archive_on_disk(*folders):
    """No file under ``folders`` is an archive part or holds one (nothing downloaded, nothing extracted)."""
    sizes = {(SAMPLE / part).stat().st_size for part in PASSAGE_PARTS} | {len(zip64_bytes(QUERY_MEMBERS))}
    for folder in folders:
        for path in Path(folder).rglob("*"):
            if path.is_file():
                assert path.stat().st_size not in sizes and "Web_Image.zip" not in path.name, path
                assert not path.read_bytes().startswith(b"PK\x03\x04"), path
    return True


def test_a_url_images_dir_reads_the_directory_then_one_exact_range_per_image(served, tables, tmp_path):
    parts = [served.root / "images" / part for part in PASSAGE_PARTS]
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path)
    # Ready with one HEAD per part (cache key) + one per part (reader), and the directory in ranged GETs only.
    gets = served.gets("Web_Image")
    assert all(request.range for request in gets) and len(gets) <= 3
    assert sum(request.sent for request in gets) == directory_bytes(parts)
    assert [request.method for request in served.requests if request.method != "GET"] == ["HEAD"] * 6
    served.reset()

    expected = expected_images()
    rows = [dataset[index] for index in (5, 17, 3, 40, 150)]  # a row is decoded whole: its image read once
    assert [fingerprint(row["image"]) for row in rows] == [expected[row["passage_id"]] for row in rows]
    spans = [SPANS[f"Web_Image/{row['page_screenshot']}"] for row in rows]
    # One GET per image, for exactly its local header and data (each span lies inside one part here); no HEAD.
    part_size = parts[0].stat().st_size
    assert [(request.method, request.range) for request in served.requests] == [
        ("GET", f"bytes={start - start // part_size * part_size}-{end - 1 - start // part_size * part_size}")
        for start, end in spans
    ]
    assert served.sent() == sum(end - start for start, end in spans)
    assert no_archive_on_disk(tmp_path / "cache", tmp_path / "hf")


def test_the_directory_is_read_once_per_process_then_from_the_cache(served, tables, tmp_path, monkeypatch):
    load("challenge_passage", tables, served.file_url("images"), tmp_path)
    first = len(served.gets("Web_Image"))
    assert first >= 1
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path / "again")
    assert len(served.gets("Web_Image")) == first  # same process: no GET at all
    monkeypatch.setattr(m2kr_archive, "_ARCHIVES", {})  # a new process: the entry in $HF_HOME/mmrhub
    assert len(list((tmp_path / "hf" / "mmrhub" / "zip-directories").iterdir())) == 1
    served.reset()
    load("challenge_passage", tables, served.file_url("images"), tmp_path / "third")
    assert [request.method for request in served.requests] == ["HEAD"] * 6
    assert dataset[0]["image"].size == (48, 32)


def test_a_part_changed_on_the_server_is_one_line_and_read_anew(served, tables, tmp_path):
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path)
    assert dataset[0]["image"].size == (48, 32)
    part = served.root / "images" / PASSAGE_PARTS[0]
    part.write_bytes(part.read_bytes())  # same bytes, new modification time: a new ETag
    with pytest.raises(
        RemoteReadError,
        match=r"Web_Image.zip.001 changed on the server since its directory was read "
        r"\(ETag .* is now .*\); load it again",
    ) as caught:
        dataset[1]["image"]
    assert "\n" not in str(caught.value)
    assert not list((tmp_path / "hf" / "mmrhub" / "zip-directories").iterdir())  # the stale directory is dropped
    served.reset()
    again = load("challenge_passage", tables, served.file_url("images"), tmp_path / "again")
    assert served.gets("Web_Image") and again[0]["image"].size == (48, 32)


def test_a_server_without_range_support_stops_in_one_line(served, tables, tmp_path):
    served.ranges = False
    with pytest.raises(RemoteReadError) as caught:
        load("challenge_passage", tables, served.file_url("images"), tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "Web_Image.zip.003: the server ignores range requests" in message
    size = (served.root / "images" / PASSAGE_PARTS[2]).stat().st_size
    assert f"would download this {size:,}-byte file whole; stopped." in message and "download_archives=True" in message
    assert len(served.gets("Web_Image")) == 1  # it hung up on the first answer
    assert no_archive_on_disk(tmp_path / "cache", tmp_path / "hf")


def test_without_range_support_the_download_is_taken_only_when_asked(served, tables, tmp_path, monkeypatch):
    import datasets

    # the download manager refuses URLs offline
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    served.ranges = False
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path, download_archives=True)
    assert [request.range for request in served.gets("Web_Image")] == [None] * 3
    assert dataset[0]["image"].size == (48, 32)


def test_a_missing_part_is_one_line(range_server, tables, tmp_path):
    (range_server.root / "images").mkdir()
    with pytest.raises(FileNotFoundError) as caught:
        load("challenge_passage", tables, range_server.file_url("images"), tmp_path)
    assert str(caught.value) == (
        f"Archive part {range_server.file_url('images/Web_Image.zip.001')} is missing (the server answered 404 Not "
        "Found): check images_dir= (--images-dir), the folder holding the parts."
    )


def test_hf_images_dir_offline_is_one_line(tables, tmp_path):
    with pytest.raises(RemoteReadError) as caught:
        load("challenge_passage", tables, f"hf://datasets/{REPO}", tmp_path)
    assert str(caught.value) == (
        f"hf://datasets/{REPO} is on the Hub, but the Hub is offline (HF_HUB_OFFLINE is set); "
        "unset HF_HUB_OFFLINE, or pass a local folder holding the files."
    )


def test_hf_images_dir_reads_ranges_of_the_hub_files(hub_server, tables, tmp_path):
    repo = serve_images(tmp_path / "repo")
    sha = hub_server.add_repo(REPO, repo)
    dataset = load("challenge_passage", tables, f"hf://datasets/{REPO}", tmp_path)
    # Pinned to the commit main points to: later pushes cannot change what the references read.
    reference = dataset.cast_column("image", datasets.Image(decode=False))[0]["image"]["path"]
    assert reference.endswith("::" + "|".join(f"hf://datasets/{REPO}@{sha}/{part}" for part in PASSAGE_PARTS))
    # Each part read is resolved once (a HEAD the Hub answers with a redirect), at the pinned commit; its ranges
    # are read from the CDN URL it redirects to.
    resolves = [request for request in hub_server.requests if "/resolve/" in request.path]
    assert resolves and all(
        (request.method, request.status) == ("HEAD", 302) and f"/resolve/{sha}/" in request.path for request in resolves
    )
    cdn = hub_server.gets("/cdn/")
    assert cdn and all(request.range and request.host == "cdn" for request in cdn)
    assert len(resolves) == len({request.path.rsplit("/", 1)[1] for request in cdn})
    assert sum(request.sent for request in cdn) == directory_bytes([repo / part for part in PASSAGE_PARTS])
    hub_server.reset()
    expected = expected_images()
    rows = [dataset[index] for index in (2, 90)]
    assert [fingerprint(row["image"]) for row in rows] == [expected[row["passage_id"]] for row in rows]
    cdn = hub_server.gets("/cdn/")
    assert len(cdn) == 2 and all(request.range for request in cdn)
    spans = [SPANS[f"Web_Image/{row['page_screenshot']}"] for row in rows]
    assert hub_server.sent("/cdn/") == sum(end - start for start, end in spans)
    assert no_archive_on_disk(tmp_path / "cache", tmp_path / "hf")


def test_ids_load_chosen_rows_and_read_only_their_images(served, tables, tmp_path):
    ids = [row["passage_id"] for row in source_rows("challenge_passage")][::50]
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path, ids=ids[::-1])
    assert dataset["passage_id"] == ids[::-1]
    served.reset()
    expected = expected_images()
    assert [fingerprint(row["image"]) for row in dataset] == [expected[pid] for pid in ids[::-1]]
    assert len(served.gets("Web_Image")) == len(ids)
    with pytest.raises(M2krDataError, match=r"1 of the 2 ids given are not passage_ids of the table: 'nope'\."):
        load("challenge_passage", tables, served.file_url("images"), tmp_path, ids=[ids[0], "nope"])


def test_streaming_with_ids_reads_only_the_kept_images(served, tables, tmp_path):
    ids = [row["question_id"] for row in source_rows("challenge_data")][1::7]
    streamed = load("challenge_data", tables, served.file_url("images"), tmp_path, streaming=True, ids=ids)
    served.reset()
    rows = list(streamed)
    expected = expected_images("challenge_data")
    assert [row["question_id"] for row in rows] == ids
    assert [fingerprint(row["image"]) for row in rows] == [expected[qid] for qid in ids]
    gets = served.gets("query_images.zip")
    assert len(gets) == len(ids) and all(request.range for request in gets)


def test_neighbouring_members_are_read_together(served, monkeypatch):
    monkeypatch.setenv("MMRHUB_MAX_REQUESTS", "1")  # one request at a time: only gaps split the reads
    fs = m2kr_archive.SplitZipFileSystem(
        fo="|".join(served.file_url(f"images/{part}") for part in PASSAGE_PARTS), target_protocol="http"
    )
    served.reset()
    names = [name for name, _ in PASSAGE_MEMBERS]
    wanted = names[10:20] + names[-5:]  # ten neighbours in the first part, five in the last
    got = fs.cat(wanted)
    assert got == {name: data for name, data in PASSAGE_MEMBERS if name in wanted}
    gets = served.gets("Web_Image")
    assert len(gets) == 2
    assert served.sent() == (SPANS[names[19]][1] - SPANS[names[10]][0]) + (SPANS[names[-1]][1] - SPANS[names[-5]][0])


def test_a_large_zip64_directory_is_read_in_few_exact_ranges(range_server, tmp_path):
    members = [(f"Web_Image/{index:06d}_{'x' * 40}.png", index.to_bytes(4, "big") * 3) for index in range(3000)]
    parts = split_zip(range_server.root, members, PASSAGE_PARTS)
    range_server.reset()
    fs = m2kr_archive.SplitZipFileSystem(
        fo="|".join(range_server.file_url(part.name) for part in parts), target_protocol="http"
    )
    assert len(fs.zip.infolist()) == 3000
    gets = range_server.gets()
    # The directory (over 128 KiB here) spans two parts: each byte of it is sent once, in at most 3 requests.
    assert len(gets) <= 3 and range_server.sent() == directory_bytes(parts)
    with fs.open(members[1234][0]) as member:
        assert member.read() == members[1234][1]
    assert len(range_server.gets()) == len(gets) + 1


def test_a_member_whose_bytes_changed_fails_its_crc_remotely(served):
    part = served.root / "images" / PASSAGE_PARTS[0]
    start, end = SPANS[PASSAGE_MEMBERS[3][0]]
    data = bytearray(part.read_bytes())
    data[end - 2] ^= 0xFF
    fs = m2kr_archive.SplitZipFileSystem(
        fo="|".join(served.file_url(f"images/{part}") for part in PASSAGE_PARTS), target_protocol="http"
    )
    part.write_bytes(bytes(data))
    for reader in fs._virtual.readers:
        reader.etag = None  # as from a server that gives no ETag: the CRC is what catches it
    with pytest.raises(M2krDataError, match=r"has CRC-32 \w+ where the zip directory lists"):
        fs.open(PASSAGE_MEMBERS[3][0]).read()


def _in_workers(dataset, context):
    torch = pytest.importorskip("torch")
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=8, num_workers=2, collate_fn=list, multiprocessing_context=context
    )
    return [row for batch in loader for row in batch]


@pytest.mark.parametrize(
    "context",
    [
        "fork",
        # spawned workers import torch and datasets afresh (tens of seconds); they open the members through the
        # fsspec.specs entry point, with the directory from $HF_HOME/mmrhub (one HEAD per part, no GET of it)
        pytest.param("spawn", marks=pytest.mark.slow),
    ],
)
def test_dataloader_workers_read_one_range_per_image(served, tables, tmp_path, context):
    dataset = load("challenge_passage", tables, served.file_url("images"), tmp_path).select(range(0, 300, 10))
    served.reset()
    rows = _in_workers(dataset, context)
    expected = expected_images()
    assert [fingerprint(row["image"]) for row in rows] == [expected[row["passage_id"]] for row in rows]
    assert len(rows) == 30 and len(served.gets("Web_Image")) == 30
    assert served.sent() == sum(
        end - start for start, end in (SPANS[f"Web_Image/{row['page_screenshot']}"] for row in rows)
    )
    heads = [request for request in served.requests if request.method == "HEAD"]
    assert len(heads) == (0 if context == "fork" else 6)  # a spawned worker asks each part's state once


def test_coalescing_moves_at_most_a_fifth_more_than_the_members(range_server, monkeypatch):
    monkeypatch.setenv("MMRHUB_MAX_REQUESTS", "1")  # one request at a time: neighbours joined as far as allowed
    members = [(f"Web_Image/{index:04d}.png", bytes([index % 251]) * 1000) for index in range(60)]
    parts = split_zip(range_server.root, members, ["Web_Image.zip.001"])
    spans = member_spans(members)
    fs = m2kr_archive.SplitZipFileSystem(fo=range_server.file_url(parts[0].name), target_protocol="http")
    names = [name for name, _ in members]
    for wanted, requests in ((names[0:20:2], 10), (names[20:30] + names[31:33], 1)):
        range_server.reset()
        assert fs.cat(wanted) == {name: data for name, data in members if name in wanted}
        span_bytes = sum(spans[name][1] - spans[name][0] for name in wanted)
        assert len(range_server.gets()) == requests
        assert span_bytes <= range_server.sent() <= 1.2 * span_bytes


def test_without_range_support_the_reader_hangs_up_on_a_large_part(range_server):
    """A 32 MB part: what the server got out before the reader hung up is what the sockets held, not the part."""
    members = [(f"Web_Image/{index:03d}.png", bytes([index]) * (1 << 20)) for index in range(96)]
    parts = split_zip(range_server.root, members)
    range_server.ranges = False
    with pytest.raises(RemoteReadError, match="the server ignores range requests"):
        m2kr_archive.SplitZipFileSystem(
            fo="|".join(range_server.file_url(part.name) for part in parts), target_protocol="http"
        )
    gets = range_server.gets()
    assert len(gets) == 1 and gets[0].sent < parts[2].stat().st_size / 2
