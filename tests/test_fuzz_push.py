"""Pushes over generated exports and Hub repos (seeded and bounded), against the Hub emulation driven by
huggingface_hub's own client (``tests/helpers/_hub_server.py``): a push deletes a file only while the Hub holds the
bytes our manifest records for it, replaces a file no push of ours left as it is only with --force, uploads only what
the export wrote, and says every file it does not upload, whatever the names (``*``, ``?``, ``[``, ``]``, ``!``) and
whatever the manifest (ours, an older mmrhub's list of paths, another tool's, or not JSON)."""

import hashlib
import itertools
import json

import pytest
from _hub_server import git_blob_id
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import mmrhub.export.push as push_module
from mmrhub.export.atomic import MARKER
from mmrhub.export.push_manifest import MANIFEST

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# names a user may give a file or folder, globs included; never `.` or `..` (no repo path holds them)
NAMES = st.text(alphabet="ac*?[]!-_ ", min_size=1, max_size=4).filter(lambda name: name.strip(".") != "")
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
CARD = "---\nconfigs:\n- config_name: corpus\n  data_files:\n  - split: test\n    path: corpus/*\n---\n# export\n"
MANIFESTS = ("ours", "older", "another tool's", "not JSON", "none")
_repos = itertools.count()


def content(kind: str, path: str) -> bytes:
    """Distinct bytes per path and kind; a binary file (stored in LFS by the Hub) for about half the names."""
    return (b"\x00" if len(path) % 2 else b"") + f"{kind}:{path}".encode()


def fits(tree: dict, path: str) -> bool:
    """Whether ``path`` can join ``tree`` with no file where a folder is (or the reverse)."""
    return path not in tree and not any(other.startswith(path + "/") or path.startswith(other + "/") for other in tree)


def record(data: bytes) -> dict:
    return {"blob_id": git_blob_id(data), "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


@SETTINGS
@given(
    exported=st.lists(PATHS, max_size=5),
    left=st.lists(PATHS, max_size=3),
    unchanged=st.lists(PATHS, max_size=5),
    changed=st.lists(PATHS, max_size=3),
    users=st.lists(PATHS, max_size=5),
    same_as_sent=st.lists(st.integers(0, 4), max_size=2),
    over_sent=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["user", "changed", "ours"])), max_size=2),
    manifest=st.sampled_from(MANIFESTS),
    dry_run=st.booleans(),
    force=st.booleans(),
)
# two real pushes that delete, one of them replacing files with --force, whatever the generated cases hold
@example(
    exported=["c*/a", "[a]"],
    left=["a?"],
    unchanged=["c*/old", "[!a]", "a b"],
    changed=["c*/edited"],
    users=["c*/user", "*"],
    same_as_sent=[0],
    over_sent=[(1, "changed"), (2, "user")],
    manifest="ours",
    dry_run=False,
    force=True,
)
@example(
    exported=["a"],
    left=[],
    unchanged=["c/c", "!"],
    changed=["c/a"],
    users=["?"],
    same_as_sent=[],
    over_sent=[(0, "ours")],
    manifest="ours",
    dry_run=False,
    force=False,
)
def test_a_push_acts_only_on_the_bytes_it_wrote(
    writable_hub,
    tmp_path_factory,
    exported,
    left,
    unchanged,
    changed,
    users,
    same_as_sent,
    over_sent,
    manifest,
    dry_run,
    force,
):
    repo_id = f"org/repo-{next(_repos)}"
    folder = tmp_path_factory.mktemp("export")
    local = {"README.md": CARD.encode()}
    for path in exported:
        if fits(local, path):
            local[path] = content("local", path)
    extra = {}
    for path in left:
        if fits({**local, **extra}, path):
            extra[path] = content("left home", path)
    for path, data in {**local, **extra}.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    (folder / MARKER).write_text(json.dumps({"files": sorted(local)}))

    # the repo: files an earlier push of ours wrote (some changed on the Hub since), a user's, and the manifest
    repo = writable_hub.create_repo(repo_id)
    hub, recorded = dict(repo.files()), {}
    for kind, paths in (("ours", unchanged), ("changed", changed), ("user", users)):
        for path in paths:
            if fits(hub, path):
                hub[path] = content(kind, path)
                if kind != "user":
                    recorded[path] = content("ours", path)
    sent_paths = sorted(local)
    for index in same_as_sent:  # a file on the Hub already holding the bytes the push sends
        path = sent_paths[index % len(sent_paths)]
        if fits({k: v for k, v in hub.items() if k != path}, path):
            hub[path] = local[path]
    for index, kind in over_sent:  # other bytes where the push sends a file: a user's, or ours (changed since, or not)
        path = sent_paths[index % len(sent_paths)]
        if fits({k: v for k, v in hub.items() if k != path}, path):
            hub[path] = content(kind, path)
            if kind != "user":
                recorded[path] = content("ours", path)
    text = {
        "ours": json.dumps({"written_by": "mmrhub push", "files": {p: record(d) for p, d in recorded.items()}}),
        "older": json.dumps({"written_by": "mmrhub push", "files": sorted(recorded)}),
        "another tool's": json.dumps({"written_by": "hf-sync", "files": {p: record(d) for p, d in recorded.items()}}),
        "not JSON": "{",
        "none": None,
    }[manifest]
    if text is not None and fits({k: v for k, v in hub.items() if k != MANIFEST}, MANIFEST):
        hub[MANIFEST] = text.encode()
    else:
        manifest = "none"
    repo.commit_as_user({path: data for path, data in hub.items() if path != ".gitattributes"})
    before, head = repo.files(), repo.head

    ours = recorded if manifest == "ours" else {}
    deleted = {p for p, d in before.items() if p not in local and p != MANIFEST and ours.get(p) == d}
    deleted -= push_module.KEPT
    kept = {p for p in before if p not in local and p != MANIFEST} - deleted
    replaced = {p for p, d in before.items() if p in local and d != local[p] and ours.get(p) != d}
    clash = [
        a for a, b in itertools.product([*local, MANIFEST], kept) if a.startswith(b + "/") or b.startswith(a + "/")
    ]

    upload = push_module.plan(folder, repo_id)
    assert sorted(path for path, _ in upload.files) == sorted(local) and upload.left == sorted(extra)
    unchanged_hub = lambda: (repo.head, repo.files()) == (head, before)  # noqa: E731
    if manifest in ("another tool's", "not JSON"):
        with pytest.raises(ValueError, match=r"is not a manifest mmrhub push wrote \("):
            push_module.describe_remote(upload, push_module.remote_state(upload), dry_run=True)
        with pytest.raises(ValueError, match=r"is not a manifest mmrhub push wrote \("):
            push_module.push(upload, force=force)
        assert unchanged_hub()
        return
    if clash:
        with pytest.raises(
            ValueError, match=r"(but .* has a (file|folder) .*, which the push keeps|where mmrhub push)"
        ):
            push_module.push(upload, force=force)
        assert unchanged_hub()
        return
    if dry_run:
        printed = push_module.describe_remote(upload, push_module.remote_state(upload), dry_run=True, force=force)
        assert unchanged_hub()
    elif replaced and not force:
        with pytest.raises(ValueError, match=rf"holds {len(replaced)} file\(s\) this push would replace that no push"):
            push_module.push(upload)
        assert unchanged_hub()
        return
    else:
        _, remote = push_module.push(upload, force=force)
        printed = push_module.describe_remote(upload, remote, force=force)
        after = repo.files()
        assert set(after) == (set(before) - deleted) | set(local) | {MANIFEST}
        assert all(after[path] == before[path] for path in kept)  # a kept file keeps its bytes
        assert all(after[path] == data for path, data in local.items())
        written = json.loads(after[MANIFEST])["files"]
        assert written == {path: record(data) for path, data in local.items()}
    # every file on the Hub the push does not upload is said, deleted or kept, and every file it replaces
    # though no push of ours left it as it is; one line each
    lines = printed.splitlines()[1:]
    said = {line[10:].split("  (")[0]: line[2:9].strip() for line in lines}
    assert len(said) == len(lines)
    assert said == {
        **dict.fromkeys(deleted, "delete"),
        **dict.fromkeys(kept, "keep"),
        **dict.fromkeys(replaced, "replace"),
    }


@settings(SETTINGS, max_examples=200)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=12,
    ),
    written_by=st.sampled_from(["mmrhub push", "other", None]),
)
def test_any_manifest_is_read_or_refused_by_name(value, written_by):
    """A manifest of any shape is ours (with digests or an older list of paths) or refused naming the file: never
    another exception, never a path taken as ours without a digest."""
    from mmrhub.export.push_manifest import parse_manifest

    document = value if written_by is None else {"written_by": written_by, "files": value}
    try:
        found = parse_manifest(json.dumps(document).encode(), "org/x/.mmrhub/manifest.json")
    except ValueError as err:
        assert str(err).startswith("org/x/.mmrhub/manifest.json is not a manifest mmrhub push wrote ("), err
        return
    assert written_by == "mmrhub push"
    assert found.records == {} or all(len(digest.blob_id) == 40 for digest in found.records.values())
    assert not (found.records and found.legacy)
