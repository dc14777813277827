"""``mmrhub push``: --dry-run lists the upload; a real push calls huggingface_hub (mocked: never the network)."""

import shutil
from pathlib import Path
from unittest import mock

import pytest
from _export_helpers import run_cli
from _paths import ROOT as REPO_ROOT
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


def test_dry_run_lists_the_export_and_what_it_deletes_and_keeps_and_uploads_nothing(exported, hf_api, capsys):
    out = exported("mipr")
    factory, api = hf_api
    api.list_repo_files.return_value = [
        ".gitattributes",
        "README.md",
        "corpus/test-00000-of-00002.parquet",
        "corpus/test-00001-of-00002.parquet",
        "qrels/test-00000-of-00001.parquet",
        "queries/test-00000-of-00001.parquet",
        "notes/how-we-judged.md",
    ]
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
        "on the Hub: 2 file(s) deleted (under corpus/, qrels/, queries/, not in this upload), 2 kept",
        "  delete  corpus/test-00000-of-00002.parquet",
        "  delete  corpus/test-00001-of-00002.parquet",
        "  keep    .gitattributes",
        "  keep    notes/how-we-judged.md",
        "dry run: nothing uploaded",
    ]
    api.list_repo_files.assert_called_once_with("org/mipr", repo_type="dataset")
    api.create_repo.assert_not_called()
    api.upload_folder.assert_not_called()


def test_dry_run_offline_says_what_the_push_would_delete(exported, monkeypatch, capsys):
    monkeypatch.setattr(push_module, "get_token", lambda: None)  # the suite runs with HF_HUB_OFFLINE=1 (conftest)
    assert run_cli(["push", str(exported("m2kr")), "org/m2kr", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        "on the Hub: cannot list org/m2kr now (OfflineModeIsEnabled); the push deletes the files under "
        "challenge_answers/, challenge_data/, challenge_passage/ that this upload does not hold and keeps every other "
        "file"
    )


def test_push_dataset_creates_the_repo_and_uploads_the_folder(exported, hf_api, capsys):
    out = exported("m2kr")
    assert run_cli(["push", str(out), "org/m2kr", "--private"]) == 0
    factory, api = hf_api
    factory.assert_called_once_with(token="hf_test_token")
    api.create_repo.assert_called_once_with("org/m2kr", repo_type="dataset", private=True, exist_ok=True)
    kwargs = api.upload_folder.call_args.kwargs
    assert (kwargs["repo_id"], kwargs["repo_type"], Path(kwargs["folder_path"])) == ("org/m2kr", "dataset", out)
    assert kwargs["ignore_patterns"] == push_module.IGNORE_PATTERNS
    assert kwargs["delete_patterns"] == ["challenge_answers/*", "challenge_data/*", "challenge_passage/*"]
    assert capsys.readouterr().out.endswith("uploaded to https://huggingface.co/org/name\n")


def test_push_metric_folder_as_a_gradio_space(metric_folder, hf_api, capsys):
    assert run_cli(["push", str(metric_folder), "org/mipr"]) == 0
    factory, api = hf_api
    api.create_repo.assert_called_once_with(
        "org/mipr", repo_type="space", private=False, exist_ok=True, space_sdk="gradio"
    )
    assert api.upload_folder.call_args.kwargs["repo_type"] == "space"
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("space org/mipr: 3 file(s)")
    assert [line.split()[-1] for line in listed[1:4]] == ["README.md", "app.py", "mipr.py"]  # no __pycache__


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
def test_dry_run_of_the_real_metric_folders(name, hf_api, capsys):
    folder = REPO_ROOT / "metrics" / name
    assert run_cli(["push", str(folder), f"org/{name}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"space org/{name}: ")
    for required in ("README.md", "app.py", f"{name}.py"):
        assert f"  {required}\n" in out
    assert f"on the Hub: nothing is deleted; the files of org/{name} this upload does not replace are kept\n" in out
    hf_api[0].assert_not_called()


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


def repo_after_push(api, kwargs: dict, remote: Path) -> list:
    """Apply to the folder ``remote`` (the repo before the push) the commit that huggingface_hub's own planning makes
    of the ``upload_folder`` call ``kwargs``, as ``upload_folder`` plans it (additions, deletions, then no deletion
    of a path that is added); returns the deleted paths."""
    listing = sorted(p.relative_to(remote).as_posix() for p in remote.rglob("*") if p.is_file())
    api.list_repo_files = lambda **_: listing
    deletions = api._prepare_folder_deletions(
        repo_id=kwargs["repo_id"],
        repo_type=kwargs["repo_type"],
        revision=None,
        path_in_repo="",
        delete_patterns=kwargs.get("delete_patterns"),
    )
    additions = api._prepare_upload_folder_additions(
        kwargs["folder_path"], "", ignore_patterns=kwargs["ignore_patterns"], repo_type=kwargs["repo_type"]
    )
    added = {op.path_in_repo for op in additions}
    deleted = [op.path_in_repo for op in deletions if op.path_in_repo not in added]
    for path in deleted:
        (remote / path).unlink()
    for op in additions:
        (remote / op.path_in_repo).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(op.path_or_fileobj, remote / op.path_in_repo)
    return deleted


def test_a_push_into_an_existing_repo_leaves_exactly_the_export(exported, monkeypatch, tmp_path):
    from datasets import load_dataset

    out = exported("mipr")
    # the repo as an earlier export with two corpus shards left it, plus files the exports never write
    remote = shutil.copytree(out, tmp_path / "remote", ignore=shutil.ignore_patterns(".*"))
    shard = remote / "corpus" / "test-00000-of-00001.parquet"
    shard.rename(remote / "corpus" / "test-00000-of-00002.parquet")
    shutil.copyfile(
        remote / "corpus" / "test-00000-of-00002.parquet", remote / "corpus" / "test-00001-of-00002.parquet"
    )
    (remote / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
    (remote / "notes").mkdir()
    (remote / "notes" / "how-we-judged.md").write_text("ours\n")

    api = RealHfApi(token="hf_test_token")  # the Hub client's own planning; every network call replaced
    calls = []
    monkeypatch.setattr(api, "create_repo", lambda *args, **kwargs: "https://huggingface.co/datasets/org/mipr")
    monkeypatch.setattr(api, "upload_folder", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(api, "_validate_yaml", lambda *args, **kwargs: None)
    monkeypatch.setattr(push_module, "HfApi", lambda token: api)
    push_module.push(push_module.plan(out, "org/mipr"), token="hf_test_token")

    deleted = repo_after_push(api, calls[0], remote)
    assert deleted == ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    assert sorted(p.relative_to(remote).as_posix() for p in remote.rglob("*") if p.is_file()) == [
        ".gitattributes",
        "README.md",
        "corpus/test-00000-of-00001.parquet",
        "notes/how-we-judged.md",
        "qrels/test-00000-of-00001.parquet",
        "queries/test-00000-of-00001.parquet",
    ]
    corpus = load_dataset(str(remote), "corpus", split="test", cache_dir=str(tmp_path / "cache"))
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
