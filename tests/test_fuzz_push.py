"""Push plans over generated local and remote trees (seeded and bounded): a push deletes only files its repo's
manifest says an earlier push of ours wrote, whatever the names (`*`, `?`, `[`, `]`, `!`), and says every other
file it leaves."""

import json
import shutil
from itertools import product

import pytest
from _hub_folder import HubFolder
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import mmrhub.export.push as push_module

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# names a user may give a file or folder, globs included; never `.` or `..` (no repo path holds them)
NAMES = st.text(alphabet="ac*?[]!-_ ", min_size=1, max_size=4).filter(lambda name: name.strip(".") != "")
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)


def write_tree(root, paths: list, text: str) -> list:
    """Write each path under ``root`` (skipping one that collides with a folder or file already written)."""
    written = []
    for path in paths:
        target = root / path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                continue
            target.write_text(text)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue
        written.append(path)
    return written


@SETTINGS
@given(
    local=st.lists(PATHS, max_size=6),
    users=st.lists(PATHS, max_size=8),
    ours=st.lists(PATHS, max_size=8),
    listed_only=st.lists(PATHS, max_size=3),
    dry_run=st.booleans(),
)
def test_a_push_deletes_nothing_its_manifest_does_not_list(
    exported, tmp_path_factory, capsys, monkeypatch, local, users, ours, listed_only, dry_run
):
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    root = tmp_path_factory.mktemp("push")
    folder = shutil.copytree(exported("mipr"), root / "export")
    write_tree(folder, local, "local")
    hub = HubFolder(root / "hub")
    monkeypatch.setattr(push_module, "HfApi", hub)
    hub.root.mkdir()
    users = write_tree(hub.root, users, "user")
    written = write_tree(hub.root, ours, "ours")
    # the manifest may list paths gone since (deleted by hand): they are not on the Hub, so not deleted either
    (hub.root / ".mmrhub").mkdir(exist_ok=True)
    (hub.root / push_module.MANIFEST).write_text(json.dumps({"files": written + listed_only}))
    before = {path: (hub.root / path).read_text() for path in hub.files()}
    ours = set(written + listed_only)  # the manifest's word, whoever wrote the file since

    upload = push_module.plan(folder, "org/repo")
    sent = {path for path, _ in upload.files}
    kept = set(before) - ours - sent
    # a file uploaded where the Hub keeps a folder, or the reverse, is refused naming both, before anything changes
    conflict = any(a.startswith(b + "/") for a, b in [*product(kept, sent), *product(sent, kept)])
    if conflict:
        with pytest.raises(ValueError, match="but org/repo has a (file|folder) .*, which no mmrhub push wrote"):
            push_module.describe_remote(upload, push_module.remote_state(upload), dry_run=True)
        with pytest.raises(ValueError, match="in the export, or move that (file|folder) on the Hub, and push again"):
            push_module.push(upload)
        assert {path: (hub.root / path).read_text() for path in hub.files()} == before and hub.commits == []
        return
    if dry_run:
        printed = push_module.describe_remote(upload, push_module.remote_state(upload), dry_run=True)
        assert hub.files() == sorted(before) and hub.commits == []
    else:
        _, remote = push_module.push(upload)
        printed = push_module.describe_remote(upload, remote)
        after = set(hub.files())
        for path in before:
            if path not in sent | {push_module.MANIFEST}:
                assert (path in after) == (path not in ours), path  # deleted exactly when our manifest lists it
                if path in after:
                    assert (hub.root / path).read_text() == before[path], path
        assert after == (set(before) - set(ours)) | sent | {push_module.MANIFEST}
        assert set(json.loads((hub.root / push_module.MANIFEST).read_text())["files"]) == sent
    # every file not replaced is said, deleted or kept, one line each
    lines = printed.splitlines()[1:]
    said = {line[10:].split("  (load_dataset")[0]: line[2:8] for line in lines}
    assert len(said) == len(lines)
    assert said == {
        path: ("delete" if path in ours else "keep  ") for path in before if path not in sent | {push_module.MANIFEST}
    }
