"""The Hub emulation (``tests/helpers/_hub_server.py``) answers huggingface_hub's own client as the Hub does: repos,
commits on a parent, git blob ids and LFS sha256 in the tree, downloads, deletions of what is there, and pull
requests."""

import hashlib
import subprocess

import pytest
from _hub_server import git_blob_id
from _hub_server import lfs_pointer
from huggingface_hub import CommitOperationAdd
from huggingface_hub import CommitOperationDelete
from huggingface_hub import HfApi
from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.errors import RepositoryNotFoundError


def test_a_commit_stores_blobs_and_lfs_objects_as_the_hub_lists_them(writable_hub, tmp_path):
    api = HfApi(token="hf_test")
    assert api.create_repo("org/x", repo_type="dataset") == f"{writable_hub.url}/datasets/org/x"
    assert api.create_repo("org/x", repo_type="dataset", exist_ok=True) == f"{writable_hub.url}/datasets/org/x"
    shard = bytes(range(256)) * 100
    api.create_commit(
        "org/x",
        repo_type="dataset",
        operations=[
            CommitOperationAdd("README.md", b"---\nlicense: mit\n---\n# x\n"),
            CommitOperationAdd("data/a.parquet", shard),
        ],
        commit_message="first",
    )
    tree = {entry.path: entry for entry in api.list_repo_tree("org/x", repo_type="dataset", recursive=True)}
    assert sorted(tree) == [".gitattributes", "README.md", "data", "data/a.parquet"]
    readme = tmp_path / "README.md"
    readme.write_bytes(b"---\nlicense: mit\n---\n# x\n")
    git = subprocess.run(["git", "hash-object", str(readme)], capture_output=True, text=True, check=True).stdout
    assert (
        tree["README.md"].blob_id == git_blob_id(readme.read_bytes()) == git.strip() and tree["README.md"].lfs is None
    )
    sha256 = hashlib.sha256(shard).hexdigest()
    assert tree["data/a.parquet"].lfs.sha256 == sha256  # .gitattributes routes *.parquet to LFS
    assert tree["data/a.parquet"].blob_id == git_blob_id(lfs_pointer(sha256, len(shard)))
    assert writable_hub.calls("PUT") == [f"/lfs/{sha256}"] and writable_hub.lfs[sha256] == shard
    head = api.repo_info("org/x", repo_type="dataset").sha
    assert head == writable_hub.repo("org/x").head
    path = api.hf_hub_download("org/x", "data/a.parquet", repo_type="dataset", revision=head)
    assert open(path, "rb").read() == shard


def test_a_commit_on_a_moved_parent_and_a_deletion_of_nothing_are_refused(writable_hub):
    api = HfApi(token="hf_test")
    repo = writable_hub.create_repo("org/x")
    first = repo.head
    repo.commit_as_user({"notes.md": b"mine"})
    with pytest.raises(HfHubHTTPError) as refused:
        api.create_commit(
            "org/x",
            repo_type="dataset",
            operations=[CommitOperationAdd("a.txt", b"a")],
            commit_message="late",
            parent_commit=first,
        )
    assert refused.value.response.status_code == 412
    with pytest.raises(EntryNotFoundError):
        api.create_commit(
            "org/x", repo_type="dataset", operations=[CommitOperationDelete("gone.txt")], commit_message="x"
        )
    assert sorted(repo.files()) == [".gitattributes", "notes.md"] and len(repo.commits) == 2
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info("org/none", repo_type="dataset")


def test_a_pull_request_holds_its_commit_and_main_stays(writable_hub):
    api = HfApi(token="hf_test")
    writable_hub.create_repo("org/board", "space")
    info = api.create_commit(
        "org/board",
        repo_type="space",
        operations=[CommitOperationAdd("results/run.json", b"{}")],
        commit_message="Add a run",
        create_pr=True,
    )
    assert info.pr_num == 1 and info.pr_url == f"{writable_hub.url}/spaces/org/board/discussions/1"
    assert api.list_repo_files("org/board", repo_type="space") == [".gitattributes"]
    assert api.list_repo_files("org/board", repo_type="space", revision="refs/pr/1") == [
        ".gitattributes",
        "results/run.json",
    ]
    (found,) = api.get_repo_discussions("org/board", repo_type="space")
    assert (found.num, found.title, found.is_pull_request, found.status) == (1, "Add a run", True, "open")
    details = api.get_discussion_details("org/board", 1, repo_type="space")
    assert details.target_branch == "refs/heads/main"
    assert writable_hub.repo("org/board", "space").pull_requests[0].head == info.oid
