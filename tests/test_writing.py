"""One way out: outputs are written whole (temporary file, fsync, rename), never onto an input, and every error
names the path."""

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from _paths import ROOT

from mmrhub import writing
from mmrhub.cli import main

SAMPLE = ROOT / "data" / "mipr"
EMBEDDING = SAMPLE / "baseline" / "simulated_embedding_top50.json"


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "mipr"
    shutil.copytree(SAMPLE, folder, ignore=shutil.ignore_patterns("images"))
    return folder


def test_json_onto_the_run_being_scored_is_refused_before_any_work(data, capsys):
    run = data / "baseline" / "simulated_embedding_top50.json"
    before = run.read_bytes()
    assert main(["evaluate", "mipr", str(run), "--json", str(run)]) == 1
    err = capsys.readouterr().err
    assert err == f"mmrhub evaluate: error: --json {run}: is {run}, one of this command's inputs; write elsewhere.\n"
    assert run.read_bytes() == before


def test_json_onto_the_judgments_is_refused(data, capsys):
    annotation = data / "mipr_annotation.jsonl"
    before = annotation.read_bytes()
    assert main(["evaluate", "mipr", str(EMBEDDING), "--data-dir", str(data), "--json", str(annotation)]) == 1
    assert "one of this command's inputs; write elsewhere." in capsys.readouterr().err
    assert annotation.read_bytes() == before


def test_a_hard_link_to_an_input_is_the_input(data, capsys, tmp_path):
    run = tmp_path / "run.json"
    shutil.copy(EMBEDDING, run)
    link = tmp_path / "scores.json"
    os.link(run, link)
    assert main(["evaluate", "mipr", str(run), "--json", str(link)]) == 1
    assert f"is {run}, one of this command's inputs" in capsys.readouterr().err


def test_report_onto_a_run_is_refused(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run.json"
    shutil.copy(EMBEDDING, run)
    before = run.read_bytes()
    assert main(["report", "mipr", str(run), "-o", str(run)]) == 1
    assert f"-o {run}: is {run}, one of this command's inputs" in capsys.readouterr().err
    assert run.read_bytes() == before


def test_a_full_disk_keeps_the_previous_file_and_names_it(tmp_path, monkeypatch):
    target = tmp_path / "scores.json"
    target.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as error:
        writing.write_text(target, "new")
    assert str(error.value) == (
        f"[Errno 28] No space left on device writing {target} (the previous file is unchanged); free some space or "
        "write elsewhere."
    )
    assert target.read_text() == "previous" and sorted(p.name for p in tmp_path.iterdir()) == ["scores.json"]


def test_temporaries_of_killed_writes_are_cleared_and_nothing_else(tmp_path):
    target = tmp_path / "scores.json"
    dead = tmp_path / ".scores.json.999999999.abcdef01.tmp"
    dead.write_text("half")
    mine = tmp_path / ".scores.json.notes.tmp"  # not a name the writer makes
    mine.write_text("mine")
    alive = tmp_path / f".scores.json.{os.getpid()}.abcdef02.tmp"  # a write still running
    alive.write_text("busy")
    writing.write_text(target, "{}")
    assert not dead.exists() and mine.read_text() == "mine" and alive.read_text() == "busy"
    assert target.read_text() == "{}"


def test_json_onto_a_fifo_is_refused_naming_it_and_the_fifo_stays(capsys, tmp_path):
    fifo = tmp_path / "scores.json"
    os.mkfifo(fifo)
    assert main(["evaluate", "mipr", str(EMBEDDING), "--json", str(fifo)]) == 1
    assert capsys.readouterr().err == (
        f"mmrhub evaluate: error: --json {fifo}: is a FIFO, not a file this command may replace; write to a file.\n"
    )
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_device_is_refused_naming_it(capsys, tmp_path):
    # checked without writing, so that the test can never replace the system's /dev/null
    with pytest.raises(ValueError, match="^--json /dev/null: is a character device, not a file this command may"):
        writing.check_target("/dev/null", "--json")
    device = tmp_path / "null"
    try:
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device needs root")
    assert main(["evaluate", "mipr", str(EMBEDDING), "--json", str(device)]) == 1
    assert f"--json {device}: is a character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_the_writer_itself_never_replaces_a_fifo(tmp_path):
    fifo = tmp_path / "entry.npy"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="it is a FIFO, not a file that may be replaced"):
        writing.write_bytes(fifo, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("image", ["images/query_images/1.jpg", "images/product_images/new.json"])
def test_json_onto_the_data_images_is_refused(image, capsys, tmp_path):
    data = shutil.copytree(SAMPLE, tmp_path / "mipr")
    target = data / image
    before = target.read_bytes() if target.exists() else None
    run = data / "baseline" / EMBEDDING.name
    assert main(["evaluate", "mipr", str(run), "--data-dir", str(data), "--json", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"--json {target}: is {data / 'images'}, one of this command's inputs; write elsewhere." in err
    assert (target.read_bytes() if target.exists() else None) == before


@contextmanager
def bind_mounted(folder: Path, at: Path):
    """``folder`` mounted again at ``at`` (same device and inodes, another path); skips where mounting is not
    permitted (it needs root or a user namespace)."""
    at.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    made = subprocess.run(["mount", "--bind", str(folder), str(at)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"mount --bind is not permitted here: {made.stderr.strip()}")
    try:
        yield at
    finally:
        subprocess.run(["umount", str(at)], check=True)


def image_data(tmp_path) -> Path:
    return shutil.copytree(SAMPLE, tmp_path / "mipr")


def refused_json(data: Path, target: Path, capsys) -> str:
    before = target.read_bytes()
    run = data / "baseline" / EMBEDDING.name
    assert main(["evaluate", "mipr", str(run), "--data-dir", str(data), "--json", str(target)]) == 1
    assert target.read_bytes() == before
    return capsys.readouterr().err


def test_json_onto_a_hard_link_to_a_data_image_is_refused(tmp_path, capsys):
    data = image_data(tmp_path)
    link = tmp_path / "scores.json"
    os.link(data / "images" / "query_images" / "1.jpg", link)
    err = refused_json(data, link, capsys)
    assert f"--json {link}: is {data / 'images'}, one of this command's inputs; write elsewhere." in err


def test_json_onto_a_data_image_through_a_linked_folder_is_refused(tmp_path, capsys):
    data = image_data(tmp_path)
    (tmp_path / "pictures").symlink_to(data / "images" / "query_images")
    err = refused_json(data, tmp_path / "pictures" / "1.jpg", capsys)
    assert f"is {data / 'images'}, one of this command's inputs" in err


def test_json_onto_a_data_image_through_a_bind_mount_is_refused(tmp_path, capsys):
    data = image_data(tmp_path)
    with bind_mounted(data / "images", tmp_path / "mounted") as mounted:
        target = mounted / "query_images" / "1.jpg"  # the same file by device and inode, by no path
        err = refused_json(data, target, capsys)
        assert f"--json {target}: is {data / 'images'}, one of this command's inputs" in err
        new = mounted / "query_images" / "new.json"  # not there yet: the folder it would go in is the input
        assert main(["evaluate", "mipr", str(EMBEDDING), "--data-dir", str(data), "--json", str(new)]) == 1
        assert not new.exists() and "one of this command's inputs" in capsys.readouterr().err


def test_json_onto_a_data_image_through_a_bind_mount_of_its_subfolder_is_refused(tmp_path, capsys):
    # the mount's folder is not the input folder but one inside it: found among the input's folders by inode
    data = image_data(tmp_path)
    with bind_mounted(data / "images" / "query_images", tmp_path / "mounted") as mounted:
        err = refused_json(data, mounted / "1.jpg", capsys)
        assert f"--json {mounted / '1.jpg'}: is {data / 'images'}, one of this command's inputs" in err


def test_json_into_an_m2kr_archive_is_refused(tmp_path, capsys):
    data = tmp_path / "m2kr"
    shutil.copytree(ROOT / "data" / "m2kr", data)
    part = data / "Web_Image.zip.002"
    before = part.read_bytes()
    run = data / "baseline" / "simulated_top5.json"
    assert main(["evaluate", "m2kr", str(run), "--data-dir", str(data), "--json", str(part)]) == 1
    assert f"--json {part}: is {part}, one of this command's inputs" in capsys.readouterr().err
    assert part.read_bytes() == before


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "scores.json"
    target.write_text("old")
    target.chmod(0o600)
    writing.write_text(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_link_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    writing.write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o640


def test_json_to_dev_stdout_writes_the_stream_and_keeps_the_link(tmp_path):
    # /dev/stdout is a link into the process's descriptors: the bytes go to the stream, whatever it is connected to.
    # A link of the test's own stands for it, so that no version of the code can replace the system's.
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/proc/self/fd/1")
    script = "from mmrhub.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", script, "evaluate", "mipr", str(EMBEDDING), "--json", str(stdout)]
    piped = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    table, _, payload = piped.stdout.partition("\n{")
    assert table.startswith("| System |") and json.loads("{" + payload)["runs"][0]["name"] == EMBEDDING.stem
    log = tmp_path / "log.txt"
    with open(log, "w") as out:
        assert subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, timeout=120).returncode == 0
    assert log.read_text() == piped.stdout  # the file stdout was redirected to was written on, not replaced
    assert stdout.is_symlink() and os.readlink(stdout) == "/proc/self/fd/1"
    assert writing.standard_stream("/dev/stdout") == 1
