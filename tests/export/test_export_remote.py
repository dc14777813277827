"""``mmrhub export m2kr OUT --images-dir URL``: every member streamed from the served archives into the shards, no
part downloaded or copied, and the same shards as an export of the same archives on disk."""

import os

import pyarrow.parquet as pq
from _remote_m2kr import archive_files_under
from _remote_m2kr import archives
from _remote_m2kr import local_copy
from _remote_m2kr import remote_m2kr
from _remote_m2kr import whole_part_gets

from mmrhub.cli import main


def shards(out) -> dict:
    """{relative path: the Parquet file's table} of an export."""
    return {str(p.relative_to(out)): pq.read_table(p) for p in sorted(out.rglob("*.parquet"))}


def test_export_from_a_url_writes_the_shards_an_export_of_local_parts_writes(tmp_path, range_server, capsys):
    remote = remote_m2kr(tmp_path, range_server, queries=20, passages=90)
    local = local_copy(remote, tmp_path / "local")
    assert main(["export", "m2kr", str(tmp_path / "from-disk"), "--data-dir", str(local)]) == 0
    range_server.reset()
    out = tmp_path / "from-url"
    code = main(["export", "m2kr", str(out), "--data-dir", str(remote["data"]), "--images-dir", remote["url"]])
    assert code == 0, capsys.readouterr().err

    expected = shards(tmp_path / "from-disk")
    got = shards(out)
    assert list(got) == list(expected) and all(got[name].equals(expected[name]) for name in got)
    assert (out / "README.md").read_text() == (tmp_path / "from-disk" / "README.md").read_text()

    # Every member once, in its own range request; no part fetched whole, none written to disk.
    assert whole_part_gets(range_server) == []
    for config, archive in archives(remote["served"]).items():
        touched, directory = archive.read(range_server.requests)
        assert touched == set(archive.spans), config
        assert len(directory) == len(set(directory)) <= 2, (config, directory)
        sent = sum(range_server.sent(f"/{part}") for part in archive.parts)
        assert sent - sum(size for _, size in directory) <= 1.2 * archive.member_bytes(touched), config
    assert archive_files_under(os.environ["HF_HOME"], remote["served"]) == []


def test_an_export_of_remote_images_keeps_the_data_folder_protected(tmp_path, range_server, capsys):
    """The images' URL is no folder of this machine: the export into the data folder is refused for the data
    folder, with no word of a URL turned into a path."""
    remote = remote_m2kr(tmp_path, range_server, queries=10, passages=30)
    code = main(
        ["export", "m2kr", str(remote["data"]), "--data-dir", str(remote["data"]), "--images-dir", remote["url"]]
    )
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert str(remote["data"]) in err and "http:/" not in err.replace(remote["url"], "")


def test_export_keeps_the_requests_asked_in_flight(tmp_path, range_server, capsys):
    remote = remote_m2kr(tmp_path, range_server, queries=10, passages=120)
    range_server.hold_until(8, "Web_Image.zip", patience=1)
    argv = ["export", "m2kr", str(tmp_path / "out"), "--data-dir", str(remote["data"]), "--images-dir", remote["url"]]
    assert main([*argv, "--max-requests", "8"]) == 0, capsys.readouterr().err
    assert range_server.max_in_flight("Web_Image.zip") == 8  # from the server's log of starts and ends
    archive = archives(remote["served"])["challenge_passage"]
    touched, directory = archive.read(range_server.requests)
    assert touched == set(archive.spans)  # every member, each once
    moved = sum(range_server.sent(f"/{part}") for part in archive.parts) - sum(size for _, size in directory)
    assert moved <= 1.02 * archive.member_bytes(touched)
