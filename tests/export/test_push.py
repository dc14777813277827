"""``mmrhub push``: --dry-run lists the upload; a real push calls huggingface_hub (mocked: never the network)."""

import json
import shutil
from unittest import mock

import pytest
from _export_helpers import run_cli
from _hub_folder import HubFolder
from _paths import ROOT as REPO_ROOT
from huggingface_hub import CommitOperationDelete
from huggingface_hub import HfApi as RealHfApi
from huggingface_hub import constants as hub_constants

import mmrhub.export.push as push_module
from mmrhub.export.atomic import MARKER

SPACE_README = "---\ntitle: MIPR\nsdk: gradio\napp_file: app.py\ntags:\n- evaluate\n- metric\n---\n\n# MIPR metric\n"


@pytest.fixture
def hf_api(monkeypatch):
    api = mock.MagicMock()
    api.create_repo.return_value = "https://huggingface.co/org/name"
    factory = mock.MagicMock(return_value=api)
    monkeypatch.setattr(push_module, "HfApi", factory)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    return factory, api


@pytest.fixture
def metric_folder(tmp_path):
    folder = tmp_path / "mipr"
    folder.mkdir()
    (folder / "mipr.py").write_text("# evaluate module\n")
    (folder / "app.py").write_text("# gradio app\n")
    (folder / "README.md").write_text(SPACE_README)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "mipr.cpython-311.pyc").write_bytes(b"\0")
    return folder


def earlier_push(hub: HubFolder, files: dict, ours: list):
    """The repo as an earlier push of ours (its manifest listing ``ours``) and its users (the rest) left it."""
    for path, text in files.items():
        (hub.root / path).parent.mkdir(parents=True, exist_ok=True)
        (hub.root / path).write_text(text)
    manifest = hub.root / push_module.MANIFEST
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"written_by": "mmrhub push", "files": ours}))


USER_FILES = ["docs/paper.pdf", "*/notes.md", "c?rpus.bak/x.txt", "[a-z]*/y.txt", "corpus*", ".gitattributes"]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    folder = HubFolder(tmp_path / "hub")
    monkeypatch.setattr(push_module, "HfApi", folder)
    return folder


def test_dry_run_lists_the_export_and_what_it_deletes_and_keeps_and_uploads_nothing(exported, hub, capsys):
    out = exported("mipr")
    stale = ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    earlier_push(hub, {path: "x" for path in [*stale, "README.md", *USER_FILES]}, ours=[*stale, "README.md"])
    before = {path: (hub.root / path).read_bytes() for path in hub.files()}
    assert run_cli(["push", str(out), "org/mipr", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and p.name != MARKER)  # the marker stays home
    assert lines[0] == f"dataset org/mipr: 4 file(s), {total:,} bytes from {out}"
    size = (out / "corpus/test-00000-of-00001.parquet").stat().st_size
    assert lines[1:] == [
        f"  {(out / 'README.md').stat().st_size:>14,}  README.md",
        f"  {size:>14,}  corpus/test-00000-of-00001.parquet",
        f"  {(out / 'qrels/test-00000-of-00001.parquet').stat().st_size:>14,}  qrels/test-00000-of-00001.parquet",
        f"  {(out / 'queries/test-00000-of-00001.parquet').stat().st_size:>14,}  queries/test-00000-of-00001.parquet",
        "on the Hub: 2 file(s) would be deleted (written by an earlier mmrhub push (.mmrhub/manifest.json) and not in "
        "this upload), 6 kept (not replaced)",
        "  delete  corpus/test-00000-of-00002.parquet",
        "  delete  corpus/test-00001-of-00002.parquet",
        "  keep    */notes.md",
        "  keep    .gitattributes",
        "  keep    [a-z]*/y.txt",
        "  keep    c?rpus.bak/x.txt",
        "  keep    corpus*",
        "  keep    docs/paper.pdf",
        "dry run: nothing uploaded, nothing deleted",
    ]
    assert {path: (hub.root / path).read_bytes() for path in hub.files()} == before and hub.commits == []


def test_dry_run_offline_says_what_the_push_would_delete(exported, monkeypatch, capsys):
    monkeypatch.setattr(push_module, "get_token", lambda: None)  # the suite runs with HF_HUB_OFFLINE=1 (conftest)
    assert run_cli(["push", str(exported("m2kr")), "org/m2kr", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        "on the Hub: cannot list org/m2kr now (OfflineModeIsEnabled); the push deletes only the files that "
        ".mmrhub/manifest.json there lists (an earlier mmrhub push wrote them) and this upload does not hold, and "
        "keeps every other file"
    )


def test_push_dataset_creates_the_repo_and_commits_the_folder_and_its_manifest(exported, hub, capsys):
    out = exported("m2kr")
    assert run_cli(["push", str(out), "org/m2kr", "--private"]) == 0
    sent = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MARKER)
    assert hub.files() == sorted([*sent, ".mmrhub/manifest.json"])
    assert all((hub.root / path).read_bytes() == (out / path).read_bytes() for path in sent)
    manifest = json.loads((hub.root / ".mmrhub/manifest.json").read_text())
    assert manifest["files"] == sent and manifest["written_by"] == "mmrhub push"
    assert len(hub.commits) == 1  # files, manifest and deletions in one commit
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "on the Hub: 0 file(s) deleted (no .mmrhub/manifest.json: no file there was written by an mmrhub push), 0 "
        "kept (not replaced)",  # create_repo made it empty
        "uploaded to https://huggingface.co/datasets/org/m2kr",
    ]


def test_a_push_deletes_only_what_an_earlier_push_wrote_whatever_the_names(exported, hub, tmp_path, capsys):
    out = shutil.copytree(exported("mipr"), tmp_path / "export")
    # the user's own folders in the export, named like globs: uploaded, and deleting nothing but themselves
    for path in ["*/a.md", "c?rpus.bak/b.md", "[a-z]*/c.md", "docs/notes.md"]:
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text("local\n")
    stale = ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    users = [
        "docs/paper.pdf",
        "*/notes.md",
        "c?rpus.bak/x.txt",
        "[a-z]*/y.txt",
        "corpus*",
        "queries/test-extra.parquet",
    ]
    earlier_push(hub, {path: "remote" for path in [*stale, *users, ".gitattributes"]}, ours=stale)
    assert run_cli(["push", str(out), "org/mipr"]) == 0
    sent = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MARKER)
    assert hub.files() == sorted([*sent, *users, ".gitattributes", ".mmrhub/manifest.json"])
    assert all((hub.root / path).read_text() == "remote" for path in users)
    printed = capsys.readouterr().out
    assert "on the Hub: 2 file(s) deleted (written by an earlier mmrhub push (.mmrhub/manifest.json)" in printed
    assert all(f"  keep    {path}\n" in printed for path in users[:-1])
    assert (
        "  keep    queries/test-extra.parquet  (load_dataset reads it with config queries: delete it on the Hub if it "
        "is not part of it)\n"
    ) in printed
    # a second push of the same folder deletes nothing: every file it wrote is uploaded again
    assert run_cli(["push", str(out), "org/mipr"]) == 0
    assert "on the Hub: 0 file(s) deleted" in capsys.readouterr().out
    assert [type(op).__name__ for op in hub.commits[-1]].count("CommitOperationDelete") == 0


def test_a_repo_without_a_manifest_loses_nothing(exported, hub, capsys):
    earlier_push(hub, {"corpus/test-00000-of-00002.parquet": "x", "notes/how-we-judged.md": "y"}, ours=[])
    (hub.root / push_module.MANIFEST).unlink()
    assert run_cli(["push", str(exported("mipr")), "org/mipr", "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines()[-4:] == [
        "on the Hub: 0 file(s) would be deleted (no .mmrhub/manifest.json: no file there was written by an mmrhub "
        "push), 2 kept (not replaced)",
        "  keep    corpus/test-00000-of-00002.parquet  (load_dataset reads it with config corpus: delete it on the "
        "Hub if it is not part of it)",
        "  keep    notes/how-we-judged.md",
        "dry run: nothing uploaded, nothing deleted",
    ]


@pytest.mark.parametrize("text", ["[]", "{]", '{"files": ["a", 3]}', "\udcff"])
def test_a_manifest_mmrhub_did_not_write_is_refused_and_nothing_is_deleted(exported, hub, text, capsys):
    earlier_push(hub, {"corpus/test-00000-of-00002.parquet": "x"}, ours=[])
    (hub.root / push_module.MANIFEST).write_bytes(text.encode("utf-8", "surrogateescape"))
    assert run_cli(["push", str(exported("mipr")), "org/mipr"]) == 1
    assert capsys.readouterr().err == (
        "mmrhub push: error: org/mipr/.mmrhub/manifest.json is not a manifest mmrhub wrote (a JSON object whose "
        "`files` lists paths): it says which files a push may delete. Delete it on the Hub (the push then deletes "
        "nothing) or restore it, and push again.\n"
    )
    assert hub.commits == [] and hub.files() == [".mmrhub/manifest.json", "corpus/test-00000-of-00002.parquet"]


def test_push_metric_folder_as_a_gradio_space(metric_folder, hf_api, capsys):
    assert run_cli(["push", str(metric_folder), "org/mipr"]) == 0
    factory, api = hf_api
    api.create_repo.assert_called_once_with(
        "org/mipr", repo_type="space", private=False, exist_ok=True, space_sdk="gradio"
    )
    kwargs = api.create_commit.call_args.kwargs
    assert kwargs["repo_type"] == "space"
    assert [op.path_in_repo for op in kwargs["operations"]] == [
        "README.md",
        "app.py",
        "mipr.py",
        ".mmrhub/manifest.json",
    ]
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("space org/mipr: 3 file(s)")
    assert [line.split()[-1] for line in listed[1:4]] == ["README.md", "app.py", "mipr.py"]  # no __pycache__


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
def test_dry_run_of_the_real_metric_folders(name, hub, capsys):
    folder = REPO_ROOT / "metrics" / name
    assert run_cli(["push", str(folder), f"org/{name}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"space org/{name}: ")
    for required in ("README.md", "app.py", f"{name}.py"):
        assert f"  {required}\n" in out
    assert f"on the Hub: org/{name} does not exist yet (or is private to another account): nothing to delete\n" in out
    assert hub.commits == [] and not hub.root.exists()


def test_dataset_folder_with_a_loading_script_is_refused(exported, tmp_path, hf_api, capsys):
    import shutil

    folder = shutil.copytree(exported("mipr"), tmp_path / "repo")
    (folder / "loader.py").write_text("# script\n")
    assert run_cli(["push", str(folder), "org/mipr", "--repo-type", "dataset", "--dry-run"]) == 1
    assert (
        "holds loader.py at its root: datasets >= 4 refuses dataset repos with a loading script"
        in capsys.readouterr().err
    )


def test_link_leading_out_of_the_folder_is_refused(exported, tmp_path, hf_api, capsys):
    import shutil

    folder = shutil.copytree(exported("mipr"), tmp_path / "repo")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the Hub\n")
    (folder / "notes.txt").symlink_to(secret)
    assert run_cli(["push", str(folder), "org/mipr", "--dry-run"]) == 1
    assert (
        f"{folder}/notes.txt is a symbolic link to {secret}, outside {folder}: pushing would upload a file from "
        "elsewhere. Replace the link with a copy of what it should publish, or remove it."
    ) in capsys.readouterr().err
    hf_api[0].assert_not_called()


def test_link_inside_the_folder_is_pushed(exported, tmp_path, hf_api, capsys):
    import shutil

    folder = shutil.copytree(exported("mipr"), tmp_path / "repo")
    (folder / "CARD.md").symlink_to(folder / "README.md")
    assert run_cli(["push", str(folder), "org/mipr", "--dry-run"]) == 0
    assert "  CARD.md\n" in capsys.readouterr().out


def test_space_without_gradio_sdk_is_refused(metric_folder, capsys):
    (metric_folder / "README.md").write_text("---\ntitle: MIPR\n---\n")
    assert run_cli(["push", str(metric_folder), "org/mipr", "--dry-run"]) == 1
    assert f"{metric_folder}/README.md: the YAML header must say `sdk: gradio` (found None)." in capsys.readouterr().err


def test_push_without_token_is_refused(exported, monkeypatch, capsys):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(push_module, "get_token", lambda: None)
    factory = mock.MagicMock()
    monkeypatch.setattr(push_module, "HfApi", factory)
    assert run_cli(["push", str(exported("mipr")), "org/mipr"]) == 1
    err = capsys.readouterr().err
    assert "No Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`." in err
    assert err.startswith("mmrhub push: error: No Hugging Face token") and "huggingface-cli" not in err
    assert len(err.strip().splitlines()) == 1 and "--debug" not in err
    factory.assert_not_called()


def test_push_when_the_hub_cannot_be_reached_is_one_line(exported, monkeypatch, capsys):
    # A real HfApi and its real HTTP client, pointed at a port where nothing listens: the connection is refused.
    unreachable = "http://127.0.0.1:9"
    monkeypatch.setattr(hub_constants, "is_offline_mode", lambda: False)  # the suite runs offline (conftest)
    monkeypatch.setattr(push_module, "HfApi", lambda token: RealHfApi(token=token, endpoint=unreachable))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    assert run_cli(["push", str(exported("mipr")), "org/mipr"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(
        f"mmrhub push: error: Cannot reach the Hugging Face Hub at {unreachable} to push org/mipr ("
    )
    assert err[0].endswith("); no commit was made. Check the network (and HF_ENDPOINT), then run the push again.")


@pytest.mark.parametrize("given", ["mipr", "metrics/mipr"])
def test_an_installed_metric_folder_is_found_by_name_from_any_folder(tmp_path, monkeypatch, capsys, given):
    from mmrhub.metrics import METRICS

    monkeypatch.chdir(tmp_path)  # outside the checkout: no metrics/ folder here
    assert run_cli(["push", given, "org/mipr", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"from {METRICS / 'mipr'}" in out and "app.py" in out and "dry run: nothing uploaded" in out


def test_a_push_into_an_existing_repo_leaves_exactly_the_export(exported, hub, tmp_path):
    from datasets import load_dataset

    out = exported("mipr")
    # the repo as an earlier push of an export with two corpus shards left it, plus a file the exports never write
    shards = ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    earlier_push(
        hub,
        {"notes/how-we-judged.md": "ours\n", ".gitattributes": "*.parquet filter=lfs\n", **dict.fromkeys(shards, "")},
        ours=shards,
    )
    for shard in shards:
        shutil.copyfile(out / "corpus" / "test-00000-of-00001.parquet", hub.root / shard)
    push_module.push(push_module.plan(out, "org/mipr"), token="hf_test_token")
    assert [op.path_in_repo for op in hub.commits[0] if isinstance(op, CommitOperationDelete)] == shards
    assert hub.files() == [
        ".gitattributes",
        ".mmrhub/manifest.json",
        "README.md",
        "corpus/test-00000-of-00001.parquet",
        "notes/how-we-judged.md",
        "qrels/test-00000-of-00001.parquet",
        "queries/test-00000-of-00001.parquet",
    ]
    corpus = load_dataset(str(hub.root), "corpus", split="test", cache_dir=str(tmp_path / "cache"))
    assert corpus.num_rows == 254  # not 508: the stale shard is gone


def test_a_trec_export_is_refused_with_the_reason(tmp_path, hf_api, capsys):
    from mmrhub.cli import main

    out = tmp_path / "trec"
    assert main(["export", "mipr", str(out), "--format", "trec", "--no-check-images"]) == 0
    capsys.readouterr()
    assert run_cli(["push", str(out), "org/mipr-qrels", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"mmrhub push: error: {out} is a trec_eval qrels export whose README.md has no `configs:`: load_dataset "
        "would read qrels-l1.txt, qrels.txt as one text split, not as judgments. Push the Parquet export instead"
    )
    assert err.count("\n") == 1
    hf_api[0].assert_not_called()
