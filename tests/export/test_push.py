"""``mmrhub push`` against a Hub emulation (``tests/helpers/_hub_server.py``) that stores commits, git blobs and LFS
objects, driven by huggingface_hub's own client: a push deletes a file only while the Hub holds the bytes an earlier
push of ours recorded, replaces a file no push of ours left as it is only with --force, uploads only what the
export wrote, and names every file it refuses."""

import json
import shutil
import subprocess

import pytest
from _export_helpers import run_cli
from _hub_server import git_blob_id
from _paths import ROOT as REPO_ROOT
from huggingface_hub import HfApi as RealHfApi
from huggingface_hub import constants as hub_constants

import mmrhub.export.push as push_module
from mmrhub.export.atomic import MARKER
from mmrhub.export.push_manifest import MANIFEST
from mmrhub.export.push_manifest import digest_file

SPACE_README = "---\ntitle: MIPR\nsdk: gradio\napp_file: app.py\ntags:\n- evaluate\n- metric\n---\n\n# MIPR metric\n"


def sent_files(out) -> list:
    """What a push of an export folder uploads: every file its export wrote (all but the marker)."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name != MARKER)


def manifest_on(hub, repo_id: str, repo_type: str = "dataset") -> dict:
    return json.loads(hub.repo(repo_id, repo_type).files()[MANIFEST])


def pushed(hub, out, repo_id: str = "org/mipr", *flags) -> int:
    """``mmrhub push OUT REPO [flags]``."""
    return run_cli(["push", str(out), repo_id, *flags])


@pytest.fixture
def copy_of(exported, tmp_path):
    """``copy_of(benchmark)``: a fresh copy of an export folder (its marker included), to change freely."""

    def make(benchmark: str = "mipr", format: str = "hf"):
        return shutil.copytree(exported(benchmark, format), tmp_path / f"{benchmark}-{format}-copy")

    return make


def test_a_push_records_each_files_blob_id_and_sha256_as_the_hub_lists_them(exported, writable_hub, capsys):
    out = exported("m2kr")
    assert pushed(writable_hub, out, "org/m2kr", "--private") == 0
    repo = writable_hub.repo("org/m2kr")
    files = repo.files()
    sent = sent_files(out)
    assert sorted(files) == sorted([*sent, ".gitattributes", MANIFEST])
    assert all(files[path] == (out / path).read_bytes() for path in sent)
    assert len(repo.commits) == 2 and repo.private  # the repo's creation, then one commit: files and manifest
    written = manifest_on(writable_hub, "org/m2kr")
    assert written["written_by"] == "mmrhub push"
    tree = {entry.path: entry for entry in RealHfApi().list_repo_tree("org/m2kr", repo_type="dataset", recursive=True)}
    parquet = [path for path in sent if path.endswith(".parquet")]
    assert parquet and all(tree[path].lfs is not None for path in parquet)  # Parquet goes to LFS (.gitattributes)
    for path in sent:
        record, entry = written["files"][path], tree[path]
        assert record["size"] == entry.size == (out / path).stat().st_size
        if entry.lfs is None:
            assert record["blob_id"] == entry.blob_id == git_blob_id((out / path).read_bytes())
        else:  # the tree's blob id is the LFS pointer's; the sha256 is the bytes'
            assert record["sha256"] == entry.lfs.sha256
    # the LFS files went up as the client sends them: one batch, then a PUT of each object
    assert sorted(path.split("/")[-1] for path in writable_hub.calls("PUT", "/lfs/")) == sorted(
        written["files"][path]["sha256"] for path in parquet
    )
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "on the Hub: 0 file(s) deleted (no .mmrhub/manifest.json: no file there was written by an mmrhub push), 1 "
        "kept (not replaced)",  # create_repo made it, with the Hub's .gitattributes
        "  keep    .gitattributes",
        f"uploaded to {writable_hub.url}/datasets/org/m2kr",
    ]


def test_the_digest_is_gits_own_blob_id(tmp_path):
    """``digest_file``'s blob id is what ``git hash-object`` gives the same bytes (the id the Hub lists)."""
    path = tmp_path / "file.bin"
    path.write_bytes(bytes(range(256)) * 1000 + b"\x00tail")
    found = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert digest_file(path).blob_id == found.strip()
    assert digest_file(path).size == 256_005


def test_a_second_push_deletes_the_stale_shards_it_wrote_and_nothing_else(copy_of, writable_hub, capsys):
    out = copy_of("mipr")
    # an earlier export with two corpus shards, pushed by us; then a user adds files named like globs
    shard = out / "corpus" / "test-00000-of-00001.parquet"
    stale = ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    shutil.move(shard, out / stale[0])
    (out / stale[1]).write_bytes(b"PAR1 second shard")
    marker = json.loads((out / MARKER).read_text())
    marker["files"] = sorted([*(f for f in marker["files"] if not f.startswith("corpus/")), *stale])
    (out / MARKER).write_text(json.dumps(marker))
    assert pushed(writable_hub, out) == 0
    users = {
        "docs/paper.pdf": b"%PDF user",
        "*/notes.md": b"user",
        "c?rpus.bak/x.txt": b"user",
        "[a-z]*/y.txt": b"user",
        "corpus*": b"user",
        "queries/test-extra.parquet": b"user",
    }
    writable_hub.repo("org/mipr").commit_as_user(users)
    # the export again, one corpus shard now
    shutil.move(out / stale[0], shard)
    (out / stale[1]).unlink()
    marker["files"] = sorted([*(f for f in marker["files"] if f not in stale), "corpus/test-00000-of-00001.parquet"])
    (out / MARKER).write_text(json.dumps(marker))
    capsys.readouterr()
    assert pushed(writable_hub, out) == 0
    files = writable_hub.repo("org/mipr").files()
    assert sorted(files) == sorted([*sent_files(out), *users, ".gitattributes", MANIFEST])
    assert all(files[path] == data for path, data in users.items())
    printed = capsys.readouterr().out
    assert (
        "on the Hub: 2 file(s) deleted (written by an earlier mmrhub push (.mmrhub/manifest.json), unchanged since, "
        "and not in this upload), 7 kept (not replaced)\n"
        "  delete  corpus/test-00000-of-00002.parquet\n"
        "  delete  corpus/test-00001-of-00002.parquet\n"
    ) in printed
    assert all(f"  keep    {path}\n" in printed for path in ["*/notes.md", "docs/paper.pdf", "corpus*"])
    assert (
        "  keep    queries/test-extra.parquet  (load_dataset reads it with config queries: delete it on the Hub if it "
        "is not part of it)\n"
    ) in printed
    deletions = [op for op in writable_hub.repo("org/mipr").commits[-1].operations if op[0] == "delete"]
    assert deletions == [("delete", stale[0]), ("delete", stale[1])]
    # the same folder once more: nothing to delete, and no commit of unchanged files
    commits = len(writable_hub.repo("org/mipr").commits)
    assert pushed(writable_hub, out) == 0
    assert "on the Hub: 0 file(s) deleted" in capsys.readouterr().out
    assert len(writable_hub.repo("org/mipr").commits) == commits  # huggingface_hub skips a commit changing nothing


def test_a_file_the_user_replaced_is_kept_and_said_changed(exported, writable_hub, capsys):
    """A user replaced our queries shard with their own file; a push of another export kind (MTEB's layout, which
    has no such file) keeps it, saying it changed since our push."""
    assert pushed(writable_hub, exported("mipr")) == 0
    theirs = b"PAR1 the user's own queries"
    writable_hub.repo("org/mipr").commit_as_user({"queries/test-00000-of-00001.parquet": theirs})
    capsys.readouterr()
    assert pushed(writable_hub, exported("mipr", "mteb"), "org/mipr", "--dry-run") == 0
    printed = capsys.readouterr().out
    assert "  keep    queries/test-00000-of-00001.parquet  (changed on the Hub since our push)" in printed
    assert "  delete  corpus/test-00000-of-00001.parquet\n" in printed  # ours, unchanged, and not in this upload
    assert pushed(writable_hub, exported("mipr", "mteb"), "org/mipr") == 0
    assert writable_hub.repo("org/mipr").files()["queries/test-00000-of-00001.parquet"] == theirs


@pytest.mark.parametrize(
    "manifest",
    [
        # a path listed as ours with no record of its bytes (an edit on the Hub, or a push of mmrhub before blob ids)
        {"written_by": "mmrhub push", "files": ["docs/paper.pdf"]},
        # a record whose bytes are not the file's
        {
            "written_by": "mmrhub push",
            "files": {"docs/paper.pdf": {"blob_id": "0" * 40, "sha256": "0" * 64, "size": 9}},
        },
    ],
)
def test_a_manifest_listing_a_users_file_deletes_nothing(exported, writable_hub, manifest, capsys):
    repo = writable_hub.create_repo("org/mipr")
    repo.commit_as_user({"docs/paper.pdf": b"%PDF mine", MANIFEST: json.dumps(manifest).encode()})
    assert pushed(writable_hub, exported("mipr")) == 0
    assert repo.files()["docs/paper.pdf"] == b"%PDF mine"
    printed = capsys.readouterr().out
    why = "listed by an older mmrhub push, which recorded no blob ids" if isinstance(manifest["files"], list) else ""
    assert f"  keep    docs/paper.pdf  ({why or 'changed on the Hub since our push'})\n" in printed
    assert "on the Hub: 0 file(s) deleted" in printed


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            '{"written_by": "other-tool", "files": ["docs/paper.pdf"]}',
            "its written_by is 'other-tool', not 'mmrhub push'",
        ),
        ('{"files": ["docs/paper.pdf"]}', "its written_by is None, not 'mmrhub push'"),
        ("[]", "it is not a JSON object"),
        ("{]", "it is not a JSON object"),
        ('{"written_by": "mmrhub push", "files": ["a", 3]}', "its `files` is not an object of paths"),
        ('{"written_by": "mmrhub push", "files": {"a": {"blob_id": "x"}}}', "its entry for 'a' is not a size, a git"),
        ("\udcff", "it is not a JSON object"),
    ],
)
def test_a_manifest_mmrhub_did_not_write_is_refused_by_name_and_nothing_changes(
    exported, writable_hub, text, why, capsys
):
    repo = writable_hub.create_repo("org/mipr")
    repo.commit_as_user({"docs/paper.pdf": b"%PDF", MANIFEST: text.encode("utf-8", "surrogateescape")})
    before = (repo.head, repo.files())
    out = exported("mipr")
    capsys.readouterr()  # the export's own progress, where this test is the first to ask for it
    assert pushed(writable_hub, out) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"mmrhub push: error: org/mipr/.mmrhub/manifest.json is not a manifest mmrhub push wrote ({why}"
    )
    assert err.endswith(
        "it says which files a push may delete. Delete it on the Hub (the push then deletes nothing) or restore it, "
        "and push again.\n"
    )
    assert err.count("\n") == 1 and (repo.head, repo.files()) == before


def test_a_card_edited_on_the_hub_is_replaced_only_with_force(exported, writable_hub, capsys):
    out = exported("mipr")
    assert pushed(writable_hub, out) == 0
    repo = writable_hub.repo("org/mipr")
    edited = (out / "README.md").read_bytes() + b"\n## Our notes, added on the Hub\n"
    repo.commit_as_user({"README.md": edited})
    capsys.readouterr()
    assert pushed(writable_hub, out, "org/mipr", "--dry-run") == 0
    printed = capsys.readouterr().out
    assert (
        "on the Hub: 0 file(s) would be deleted (written by an earlier mmrhub push (.mmrhub/manifest.json), unchanged "
        "since, and not in this upload), 1 would be replaced only with --force (not as our last push left them), 1 "
        "kept (not replaced)\n  replace README.md  (changed on the Hub since our push)\n"
    ) in printed
    head, commits_sent = repo.head, len(writable_hub.calls("POST", "/commit/"))
    assert pushed(writable_hub, out) == 1
    assert capsys.readouterr().err == (
        "mmrhub push: error: org/mipr holds 1 file(s) this push would replace that no push of ours left as they are: "
        "README.md (changed on the Hub since our push). Nothing was sent. Bring their changes into the export, or pass "
        "--force to replace them (--dry-run lists them).\n"
    )
    assert repo.head == head and repo.files()["README.md"] == edited
    assert len(writable_hub.calls("POST", "/commit/")) == commits_sent  # nothing sent
    assert pushed(writable_hub, out, "org/mipr", "--force") == 0
    assert repo.files()["README.md"] == (out / "README.md").read_bytes()
    assert "  replace README.md  (changed on the Hub since our push)" in capsys.readouterr().out


def test_a_users_file_in_a_repo_no_push_wrote_is_replaced_only_with_force(exported, writable_hub, capsys):
    repo = writable_hub.create_repo("org/mipr")
    repo.commit_as_user({"README.md": b"# My dataset\n", "notes/how-we-judged.md": b"ours\n"})
    assert pushed(writable_hub, exported("mipr")) == 1
    assert "README.md (not written by an mmrhub push). Nothing was sent." in capsys.readouterr().err
    assert pushed(writable_hub, exported("mipr"), "org/mipr", "--force") == 0
    assert repo.files()["notes/how-we-judged.md"] == b"ours\n"


def test_a_plain_copy_of_the_hub_repo_is_refused(exported, writable_hub, tmp_path, capsys):
    """A folder no export wrote (here a copy of the repo as the Hub holds it) is refused: its files are never
    recorded as ours."""
    assert pushed(writable_hub, exported("mipr")) == 0
    writable_hub.repo("org/mipr").commit_as_user({"docs/paper.pdf": b"%PDF mine"})
    copy = tmp_path / "clone"
    for path, data in writable_hub.repo("org/mipr").files().items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_bytes(data)
    capsys.readouterr()
    assert pushed(writable_hub, copy) == 1
    assert capsys.readouterr().err == (
        f"mmrhub push: error: {copy} was not written by `mmrhub export` (it has no .mmrhub-export file): a push "
        "uploads only the files an export wrote, and records them as mmrhub's. Export the benchmark (`mmrhub export "
        "BENCHMARK OUT`) and push OUT.\n"
    )


def test_files_added_to_an_export_stay_home_and_are_never_recorded(copy_of, writable_hub, capsys):
    out = copy_of("mipr")
    for path in ["docs/paper.pdf", "*/a.md", "c?rpus.bak/b.md"]:
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text("local\n")
    assert pushed(writable_hub, out) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[5:9] == [
        "not uploaded: 3 file(s) in the folder that `mmrhub export` did not write",
        f"  {'':>14}  */a.md",
        f"  {'':>14}  c?rpus.bak/b.md",
        f"  {'':>14}  docs/paper.pdf",
    ]
    exported_files = sorted(json.loads((out / MARKER).read_text())["files"])
    assert sorted(writable_hub.repo("org/mipr").files()) == sorted([*exported_files, ".gitattributes", MANIFEST])
    assert sorted(manifest_on(writable_hub, "org/mipr")["files"]) == exported_files


def test_a_file_the_export_lists_but_that_is_gone_is_named(copy_of, writable_hub, capsys):
    out = copy_of("mipr")
    (out / "qrels" / "test-00000-of-00001.parquet").unlink()
    assert pushed(writable_hub, out) == 1
    assert capsys.readouterr().err == (
        f"mmrhub push: error: {out}: qrels/test-00000-of-00001.parquet is listed by the export (.mmrhub-export) but "
        "is not there (or is not a file): export again, and push the new folder.\n"
    )


@pytest.mark.parametrize(
    ("card", "said"),
    [
        (b"---\nconfigs: [a\n---\n", "its YAML header (between the `---` lines) does not parse (line 2): expected"),
        (b"---\n- a list\n---\n", "its YAML header (between the `---` lines) does not parse: repo card metadata"),
        (
            b"---\nlicense: mit\n---\n\xff\xfe caf\xe9\n",
            "line 4, byte offset 21: b'\\xff' is not UTF-8; a card must be UTF-8 text",
        ),
    ],
)
def test_a_broken_card_names_the_file(copy_of, writable_hub, card, said, capsys):
    out = copy_of("mipr")
    (out / "README.md").write_bytes(card)
    assert pushed(writable_hub, out, "org/mipr", "--dry-run") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"mmrhub push: error: {out}/README.md: {said}") and err.count("\n") == 1


@pytest.mark.parametrize("where", [".mmrhub", ".mmrhub/manifest.json/x.txt"])
def test_a_user_file_where_the_manifest_goes_is_said(exported, writable_hub, where, capsys):
    repo = writable_hub.create_repo("org/mipr")
    repo.commit_as_user({where: b"mine"})
    assert pushed(writable_hub, exported("mipr")) == 1
    assert capsys.readouterr().err == (
        f"mmrhub push: error: org/mipr has a file {where} where mmrhub push keeps its manifest "
        "(.mmrhub/manifest.json); no mmrhub push wrote it, so the push will not replace it. Rename or delete it on "
        "the Hub, and push again.\n"
    )
    assert repo.files() == {".gitattributes": repo.files()[".gitattributes"], where: b"mine"}


def test_a_commit_made_on_the_hub_during_the_push_fails_it_and_changes_nothing(
    exported, writable_hub, monkeypatch, capsys
):
    assert pushed(writable_hub, exported("mipr")) == 0
    repo = writable_hub.repo("org/mipr")
    read = push_module.read_remote

    def read_then_someone_commits(upload, api):
        remote = read(upload, api)
        repo.commit_as_user({"corpus/test-00000-of-00001.parquet": b"PAR1 replaced meanwhile"})
        return remote

    monkeypatch.setattr(push_module, "read_remote", read_then_someone_commits)
    head = repo.head
    assert pushed(writable_hub, exported("mipr", "mteb")) == 1  # would delete that shard: ours when read
    err = capsys.readouterr().err.splitlines()[-1]  # after the LFS uploads' progress bars
    assert err == (
        f"mmrhub push: error: org/mipr changed on the Hub while this push read it (a commit after {head[:12]}): "
        "nothing was committed. Run the push again, --dry-run first to see what it now does."
    )
    assert repo.files()["corpus/test-00000-of-00001.parquet"] == b"PAR1 replaced meanwhile"
    assert repo.commits[-1].message == "edited on the website"


def test_dry_run_offline_says_what_the_push_would_delete(exported, monkeypatch, capsys):
    monkeypatch.setattr(push_module, "get_token", lambda: None)  # the suite runs with HF_HUB_OFFLINE=1 (conftest)
    assert run_cli(["push", str(exported("m2kr")), "org/m2kr", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        "on the Hub: cannot list org/m2kr now (OfflineModeIsEnabled); the push deletes only the files that "
        ".mmrhub/manifest.json there records and that still hold the bytes it records (their blob ids), that this "
        "upload does not hold; it keeps every other file, and replaces a file no push of ours left as it is only "
        "with --force"
    )


def test_the_installed_metric_folder_is_pushed_as_a_gradio_space_and_recorded(writable_hub, capsys):
    from mmrhub.metrics import METRICS

    assert run_cli(["push", "mipr", "org/mipr"]) == 0
    repo = writable_hub.repo("org/mipr", "space")
    shipped = sorted(p.name for p in (METRICS / "mipr").iterdir() if p.is_file() and not p.name.endswith(".pyc"))
    assert sorted(repo.files()) == sorted([*shipped, ".gitattributes", MANIFEST])
    assert sorted(manifest_on(writable_hub, "org/mipr", "space")["files"]) == shipped
    assert capsys.readouterr().out.startswith(f"space org/mipr: {len(shipped)} file(s)")


def test_a_users_own_metric_folder_is_pushed_with_nothing_recorded(tmp_path, writable_hub, capsys):
    folder = tmp_path / "mipr"
    folder.mkdir()
    (folder / "mipr.py").write_text("# evaluate module\n")
    (folder / "app.py").write_text("# gradio app\n")
    (folder / "README.md").write_text(SPACE_README)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "mipr.cpython-311.pyc").write_bytes(b"\0")
    assert run_cli(["push", str(folder), "org/mipr"]) == 0
    repo = writable_hub.repo("org/mipr", "space")
    assert sorted(repo.files()) == [".gitattributes", MANIFEST, "README.md", "app.py", "mipr.py"]  # no __pycache__
    assert manifest_on(writable_hub, "org/mipr", "space")["files"] == {}
    assert (
        f"note: {folder} is not a folder mmrhub wrote, so its files are not recorded as mmrhub's: no later push "
        "deletes them"
    ) in capsys.readouterr().out
    # a second push of it replaces its own files only with --force: nothing records them as ours
    (folder / "app.py").write_text("# gradio app, changed\n")
    assert run_cli(["push", str(folder), "org/mipr"]) == 1
    assert "app.py (not written by an mmrhub push)" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["mipr", "m2kr"])
def test_dry_run_of_the_real_metric_folders(name, writable_hub, capsys):
    folder = REPO_ROOT / "metrics" / name
    assert run_cli(["push", str(folder), f"org/{name}", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"space org/{name}: ")
    for required in ("README.md", "app.py", f"{name}.py"):
        assert f"  {required}\n" in out
    assert f"on the Hub: org/{name} does not exist yet (or is private to another account): nothing to delete\n" in out
    assert writable_hub.repos == {} and not writable_hub.calls("POST")


def test_dataset_folder_with_a_loading_script_is_refused(copy_of, writable_hub, capsys):
    folder = copy_of("mipr")
    (folder / "loader.py").write_text("# script\n")
    marker = json.loads((folder / MARKER).read_text())
    (folder / MARKER).write_text(json.dumps({**marker, "files": [*marker["files"], "loader.py"]}))
    assert run_cli(["push", str(folder), "org/mipr", "--repo-type", "dataset", "--dry-run"]) == 1
    assert (
        "holds loader.py at its root: datasets >= 4 refuses dataset repos with a loading script"
        in capsys.readouterr().err
    )


def test_link_leading_out_of_the_folder_is_refused(copy_of, tmp_path, writable_hub, capsys):
    folder = copy_of("mipr")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the Hub\n")
    (folder / "README.md").unlink()
    (folder / "README.md").symlink_to(secret)
    assert run_cli(["push", str(folder), "org/mipr", "--dry-run"]) == 1
    assert capsys.readouterr().err == (
        f"mmrhub push: error: {folder}/README.md is a symbolic link to {secret}, outside {folder}: pushing would "
        "upload a file from elsewhere. Replace the link with a copy of what it should publish, or remove it.\n"
    )
    assert not writable_hub.requests


def test_link_inside_the_folder_is_pushed(metric_link_folder, writable_hub, capsys):
    assert run_cli(["push", str(metric_link_folder), "org/mipr", "--dry-run"]) == 0
    assert "  CARD.md\n" in capsys.readouterr().out


@pytest.fixture
def metric_link_folder(tmp_path):
    folder = tmp_path / "mipr"
    folder.mkdir()
    (folder / "mipr.py").write_text("# evaluate module\n")
    (folder / "app.py").write_text("# gradio app\n")
    (folder / "README.md").write_text(SPACE_README)
    (folder / "CARD.md").symlink_to(folder / "README.md")
    return folder


def test_space_without_gradio_sdk_is_refused(metric_link_folder, capsys):
    (metric_link_folder / "README.md").write_text("---\ntitle: MIPR\n---\n")
    assert run_cli(["push", str(metric_link_folder), "org/mipr", "--dry-run"]) == 1
    assert (
        f"{metric_link_folder}/README.md: the YAML header must say `sdk: gradio` (found None)."
        in capsys.readouterr().err
    )


def test_push_without_token_is_refused(exported, monkeypatch, writable_hub, capsys):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(push_module, "get_token", lambda: None)
    assert run_cli(["push", str(exported("mipr")), "org/mipr"]) == 1
    err = capsys.readouterr().err
    assert err == "mmrhub push: error: No Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`.\n"
    assert not writable_hub.requests


def test_push_when_the_hub_cannot_be_reached_is_one_line(exported, monkeypatch, capsys):
    # A real HfApi and its real HTTP client, pointed at a port where nothing listens: the connection is refused.
    unreachable = "http://127.0.0.1:9"
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)  # the suite runs offline (conftest)
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


def test_a_push_into_an_existing_repo_leaves_exactly_the_export(copy_of, writable_hub, tmp_path):
    from datasets import load_dataset

    out = copy_of("mipr")
    shard = "corpus/test-00000-of-00001.parquet"
    stale = ["corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet"]
    # an earlier push of ours wrote two corpus shards (each the whole corpus), recorded with their digests
    repo = writable_hub.create_repo("org/mipr")
    records = {path: digest_file(out / shard).as_json() for path in stale}
    repo.commit_as_user(
        {
            **{path: (out / shard).read_bytes() for path in stale},
            "notes/how-we-judged.md": b"ours\n",
            MANIFEST: json.dumps({"written_by": "mmrhub push", "files": records}).encode(),
        }
    )
    push_module.push(push_module.plan(out, "org/mipr"), token="hf_test_token")
    assert [op for op in repo.commits[-1].operations if op[0] == "delete"] == [("delete", path) for path in stale]
    files = repo.files()
    assert sorted(files) == sorted([*sent_files(out), ".gitattributes", MANIFEST, "notes/how-we-judged.md"])
    folder = tmp_path / "as-on-the-hub"
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    corpus = load_dataset(str(folder), "corpus", split="test", cache_dir=str(tmp_path / "cache"))
    assert corpus.num_rows == 254  # not 508: the stale shards are gone


def test_a_trec_export_is_refused_with_the_reason(tmp_path, writable_hub, capsys):
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
    assert not writable_hub.requests
