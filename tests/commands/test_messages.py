"""Messages in the user's words: compressed and packed runs, link loops, a missing model folder, extra archive
parts, and names from data or files that must not break a table."""

import bz2
import gzip
import lzma
import zipfile

import pytest
from _cli import run_cli
from _m2kr_helpers import PASSAGE_PARTS
from _m2kr_helpers import copy_sample
from _m2kr_helpers import joined_bytes
from _paths import MIPR_EMBEDDING


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)])
def test_bz2_and_xz_runs_read_like_gzip(capsys, tmp_path, suffix, compress):
    packed = tmp_path / f"{MIPR_EMBEDDING.stem}{suffix}"
    packed.write_bytes(compress(MIPR_EMBEDDING.read_bytes()))
    code, plain, _ = run_cli(capsys, "evaluate", "mipr", MIPR_EMBEDDING)
    assert code == 0
    code, out, err = run_cli(capsys, "evaluate", "mipr", packed)
    assert (code, out) == (0, plain), err


def test_a_truncated_xz_run_is_named(capsys, tmp_path):
    packed = tmp_path / "run.json.xz"
    packed.write_bytes(lzma.compress(MIPR_EMBEDDING.read_bytes())[:-40])
    code, _, err = run_cli(capsys, "evaluate", "mipr", packed)
    assert code == 1
    assert err.startswith(f"mmrhub evaluate: error: {packed}: ") and err.count("\n") == 1
    assert "xz" in err and "NUL" not in err


@pytest.mark.parametrize(
    "head, words",
    [
        (None, "a zip archive: unzip it first."),
        (b"\x28\xb5\x2f\xfd" + b"\0" * 20, "zstandard-compressed: decompress it first (zstd -d)"),
    ],
)
def test_packed_runs_are_named_not_diagnosed_as_utf16(capsys, tmp_path, head, words):
    packed = tmp_path / "run.zip"
    if head is None:
        with zipfile.ZipFile(packed, "w") as archive:
            archive.write(MIPR_EMBEDDING, "run.json")
    else:
        packed.write_bytes(head)
    code, _, err = run_cli(capsys, "evaluate", "mipr", packed)
    assert code == 1
    assert err.startswith(f"mmrhub evaluate: error: {packed}: {words}") and err.count("\n") == 1


@pytest.mark.parametrize("command", ["evaluate", "oracle", "compare", "report"])
def test_a_link_loop_as_a_run_is_one_line(capsys, tmp_path, command):
    loop = tmp_path / "a.json"
    loop.symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(loop)
    extra = {"compare": [MIPR_EMBEDDING], "report": ["-o", tmp_path / "r.html"]}.get(command, [])
    code, _, err = run_cli(capsys, command, "mipr", loop, *extra)
    assert code == 1
    assert err == (
        f"mmrhub {command}: error: {loop}: a loop of symbolic links (each leads to the next, never to a file); point "
        "it at the file to read.\n"
    )


def test_a_link_loop_as_the_json_target_is_refused_and_kept(capsys, tmp_path):
    loop = tmp_path / "scores.json"
    loop.symlink_to(tmp_path / "other.json")
    (tmp_path / "other.json").symlink_to(loop)
    code, _, err = run_cli(capsys, "evaluate", "mipr", MIPR_EMBEDDING, "--json", loop)
    assert code == 1
    loop_words = "a loop of symbolic links (each leads to the next, never to a file)"
    assert err == f"mmrhub evaluate: error: --json {loop}: {loop_words}.\n"
    assert loop.is_symlink()


@pytest.mark.parametrize("model", ["./missing", "models/../missing", "/nowhere/model", "a/b/c"])
def test_a_missing_model_folder_is_named_as_a_folder(model):
    from mmrhub.retrieve.model_loading import check_reachable

    with pytest.raises(FileNotFoundError) as error:
        check_reachable(model, "--model")
    assert str(error.value) == (
        f"--model {model}: no such folder; give the folder of a downloaded model, or a Hub id (org/name)."
    )


def test_a_hub_id_is_still_a_hub_id(monkeypatch):
    from mmrhub.retrieve.model_loading import check_reachable

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert check_reachable("Qwen/Qwen3-VL-Reranker-2B", "--model") is None


def test_extra_archive_parts_are_named(capsys, tmp_path):
    data_dir = copy_sample(tmp_path / "m2kr")
    joined = joined_bytes(data_dir)
    for part in PASSAGE_PARTS:
        (data_dir / part).unlink()
    size = -(-len(joined) // 10)
    for index in range(10):
        (data_dir / f"Web_Image.zip.{index + 1:03d}").write_bytes(joined[index * size : (index + 1) * size])
    code, _, err = run_cli(capsys, "info", "m2kr", "--data-dir", data_dir)
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert "7 more part(s) continue it beside" in last
    assert "Web_Image.zip.004, Web_Image.zip.005" in last and last.count("Web_Image.zip.0") >= 8
    assert "split into 10 parts and is read as 3" in last and "truncated" not in last


def test_a_newline_in_a_run_name_does_not_split_the_markdown_row(capsys, tmp_path):
    run = tmp_path / "line\none|two.json"
    run.write_bytes(MIPR_EMBEDDING.read_bytes())
    code, out, _ = run_cli(capsys, "evaluate", "mipr", run)
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows[2].startswith("| line\\none\\|two | ") and len(rows) == 3  # header, rule, the run
    assert all(row.count(" | ") == rows[0].count(" | ") for row in rows[2:])


@pytest.mark.parametrize(
    "command, format", [("evaluate", "markdown"), ("evaluate", "csv"), ("evaluate", "latex"), ("compare", None)]
)
def test_no_control_character_in_a_run_name_splits_a_row(capsys, tmp_path, command, format):
    names = {
        "cr\rrun": "cr\\rrun",
        "vt\x0bff\x0cnel\x85": "vt\\x0bff\\x0cnel\\x85",
        "ls\u2028ps\u2029": "ls\\u2028ps\\u2029",
    }
    runs = []
    for name in names:
        runs.append(tmp_path / f"{name}.json")
        runs[-1].write_bytes(MIPR_EMBEDDING.read_bytes())
    options = ["--format", format] if format else ["--permutations", "20"]
    code, out, _ = run_cli(capsys, command, "mipr", *runs, *options)
    assert code == 0
    assert not any(c in out for c in "\r\x0b\x0c\x85\u2028\u2029")  # each would end a line (str.splitlines)
    latex = format == "latex"  # a backslash is a command there: written \\textbackslash{}
    assert all((shown.replace("\\", r"\textbackslash{}") if latex else shown) in out for shown in names.values())
    if command == "compare":  # each pair's table is headed by both names, on one line
        header = next(line for line in out.splitlines() if line.startswith("| Measure | cr\\rrun | vt"))
        assert header.endswith(" | B - A | p | p (holm) |") and header.count(" | ") == 5
