"""Publish a folder with ``huggingface_hub``: an exported dataset repo, or a metric folder as a Gradio Space.

A push acts on the Hub's files by their bytes, never by a list of names (``push_manifest.py``). It uploads only the
files the export's own marker lists (a dataset folder no ``mmrhub export`` wrote is refused), records the git blob
id and sha256 of each in the repo's manifest, and in its one commit deletes a file an earlier push wrote only while
the Hub still holds the bytes that push recorded; every other file is kept and listed. It replaces a file the Hub
holds other bytes of than our last push left (edited on the Hub, or never ours) only when told ``force``. The commit
names the commit the push read (``parent_commit``), so a change made on the Hub meanwhile makes it fail, changing
nothing.

The token comes from the environment (``HF_TOKEN``) or a saved ``hf auth login``, as ``HfApi`` reads it.
"""

import sys
from dataclasses import dataclass
from dataclasses import field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Optional

from huggingface_hub import CommitOperationAdd
from huggingface_hub import CommitOperationDelete
from huggingface_hub import DatasetCard
from huggingface_hub import HfApi
from huggingface_hub import SpaceCard
from huggingface_hub import get_token
from huggingface_hub.utils import filter_repo_objects
from huggingface_hub.utils import get_session
from huggingface_hub.utils import validate_repo_id

from mmrhub.export.atomic import MARKER
from mmrhub.export.atomic import written_files
from mmrhub.export.push_manifest import MANIFEST
from mmrhub.export.push_manifest import Manifest
from mmrhub.export.push_manifest import digest_file
from mmrhub.export.push_manifest import hub_digest
from mmrhub.export.push_manifest import manifest_bytes
from mmrhub.export.push_manifest import parse_manifest

REPO_TYPES = ("dataset", "space")
SPACE_SDK = "gradio"
# Caches, bytecode and hidden entries (a killed export's ``.<name>.partial-*`` folder, shard temp files) stay home.
IGNORE_PATTERNS = ["__pycache__/*", "*/__pycache__/*", "*.pyc", ".*", "*/.*"]
KEPT = {".gitattributes"}  # the Hub needs it; huggingface_hub never deletes it either
MANIFEST_FOLDER = MANIFEST.split("/")[0]


@dataclass
class Upload:
    """What ``push`` will send: the folder's files (relative POSIX path, size) and the digest of each to one repo;
    whether the manifest records them as mmrhub's (``recorded``: an export's files, the metric folder mmrhub
    installs, a leaderboard board); the files of the folder left home (``left``: not written by the export); and the
    data files each config of its card reads (config name -> patterns), to flag a kept file that ``load_dataset``
    would read."""

    folder: Path
    repo_id: str
    repo_type: str
    files: list
    digests: dict = field(default_factory=dict)
    recorded: bool = True
    left: list = field(default_factory=list)
    configs: dict = field(default_factory=dict)


@dataclass
class Remote:
    """The repo before the push: its files (path -> Digest), the manifest an earlier push of ours left, the commit
    they were read at, and whether it exists (``unknown``: why it could not be listed)."""

    files: dict = field(default_factory=dict)
    manifest: Optional[Manifest] = None
    head: Optional[str] = None
    exists: bool = False
    unknown: Optional[str] = None


@dataclass
class Changes:
    """What a push does to the repo's files besides uploading: ``deleted`` (an earlier push of ours wrote them,
    unchanged since, and this upload does not hold them), ``replaced`` ((path, why): uploaded over bytes that no
    push of ours left there, only with ``force``) and ``kept`` ((path, note): every other file not uploaded)."""

    deleted: list
    replaced: list
    kept: list


def read_card(path: Path, card_class=DatasetCard, then: str = "push again"):
    """A README.md card; one that is not UTF-8, whose YAML header does not parse or is not a mapping, is one line
    naming the file (``then``: what to do once it is fixed)."""
    try:
        return card_class.load(path)
    except UnicodeDecodeError as err:
        line = err.object[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}: line {line:,}, byte offset {err.start:,}: {err.object[err.start : err.start + 1]!r} is not "
            f"UTF-8; a card must be UTF-8 text. Save it as UTF-8 and {then}."
        ) from None
    except Exception as err:  # yaml's errors, and huggingface_hub's ValueError for a header that is not a mapping
        import yaml

        if not isinstance(err, (yaml.YAMLError, ValueError)):
            raise
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""  # the header starts on the file's line 2
        problem = getattr(err, "problem", None) or str(err)
        raise ValueError(
            f"{path}: its YAML header (between the `---` lines) does not parse{where}: {problem}. Fix it and {then}."
        ) from None


def _check_dataset(folder: Path, files: list, repo_id: str):
    if "README.md" not in files:
        raise ValueError(f"{folder} has no README.md: export it with `mmrhub export` first.")
    if not (read_card(folder / "README.md").data.get("configs")):
        # without configs load_dataset guesses the layout from the file names: .txt files become one text split
        kind = "a trec_eval qrels export" if all(path.endswith(".txt") for path in files if path != "README.md") else ""
        raise ValueError(
            f"{folder} is {kind or 'a folder'} whose README.md has no `configs:`: load_dataset would read "
            f"{', '.join(path for path in files if path != 'README.md')} as one text split, not as judgments. Push "
            "the Parquet export instead (`mmrhub export BENCHMARK OUT`), whose qrels config holds the same judgments; "
            "share qrels files as they are, outside the Hub's dataset viewer."
        )
    scripts = [path for path in files if "/" not in path and path.endswith(".py")]
    if scripts:
        raise ValueError(
            f"{folder} holds {', '.join(scripts)} at its root: datasets >= 4 refuses dataset repos with a loading "
            f"script, so {repo_id} would not load. Push the `mmrhub export` folder (Parquet + README.md) instead."
        )


def _check_space(folder: Path, files: list):
    for required in ("README.md", "app.py"):
        if required not in files:
            raise ValueError(f"{folder} has no {required}: a metric Space needs README.md and app.py.")
    sdk = read_card(folder / "README.md", SpaceCard).data.get("sdk")
    if sdk != SPACE_SDK:
        raise ValueError(f"{folder}/README.md: the YAML header must say `sdk: {SPACE_SDK}` (found {sdk!r}).")


def _check_links(folder: Path, paths: list):
    # the upload reads through links: one leading out of the folder would publish a file from elsewhere.
    root = folder.resolve()
    for path in paths:
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            raise ValueError(
                f"{path} is a symbolic link to {path.resolve()}, outside {root}: pushing would upload a file from "
                "elsewhere. Replace the link with a copy of what it should publish, or remove it."
            )


def exported_files(folder: Path, present: list) -> list:
    """The files the export that wrote ``folder`` lists in its marker (``atomic.MARKER``), each checked to be there;
    a folder no export wrote is refused: a push uploads only what mmrhub wrote, so that no file of the user's is
    ever recorded as the push's (and deleted by a later one)."""
    if not (folder / MARKER).is_file():
        raise ValueError(
            f"{folder} was not written by `mmrhub export` (it has no {MARKER} file): a push uploads only the files "
            "an export wrote, and records them as mmrhub's. Export the benchmark (`mmrhub export BENCHMARK OUT`) "
            "and push OUT."
        )
    listed = written_files(folder)
    if listed is None:
        raise ValueError(
            f"{folder}/{MARKER} does not list the files the export wrote (an older `mmrhub export`, or edited): "
            "export again, and push the new folder."
        )
    missing = sorted(path for path in listed if not isinstance(path, str) or path not in present)
    if missing:
        raise ValueError(
            f"{folder}: {missing[0]} is listed by the export ({MARKER}) but is not there (or is not a file): export "
            "again, and push the new folder."
        )
    return sorted(listed)


def plan(folder, repo_id: str, repo_type: Optional[str] = None, mmrhub_written: bool = False) -> Upload:
    """Check the folder and list the files to upload with their digests. ``repo_type`` defaults to ``space`` for a
    metric folder (one with app.py or with ``<folder name>.py``, an ``evaluate`` module), else ``dataset``. A
    dataset folder uploads the files its export wrote; a Space folder all its files, recorded as mmrhub's only for
    a Space folder mmrhub wrote (``mmrhub_written``: the metric folder mmrhub installs, a leaderboard board)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder.")
    validate_repo_id(repo_id)
    if "/" not in repo_id:
        raise ValueError(f"Repo id {repo_id!r} must be org/name.")
    is_metric = (folder / "app.py").is_file() or (folder / f"{folder.resolve().name}.py").is_file()
    repo_type = repo_type or ("space" if is_metric else "dataset")
    if repo_type not in REPO_TYPES:
        raise ValueError(f"Unknown repo type {repo_type!r}; expected one of {', '.join(REPO_TYPES)}.")
    entries = {path.relative_to(folder).as_posix(): path for path in folder.rglob("*")}
    kept = sorted(filter_repo_objects(entries, ignore_patterns=IGNORE_PATTERNS))
    present = [name for name in kept if entries[name].is_file()]
    files, left = present, []
    if repo_type == "dataset":
        files = exported_files(folder, present)
        left = [name for name in present if name not in set(files)]
    _check_links(folder, [entries[name] for name in files])
    if repo_type == "dataset":
        _check_dataset(folder, files, repo_id)
    else:
        _check_space(folder, files)
    digests = {path: digest_file(folder / path) for path in files}
    return Upload(
        folder=folder,
        repo_id=repo_id,
        repo_type=repo_type,
        files=[(path, digests[path].size) for path in files],
        digests=digests,
        recorded=repo_type == "dataset" or mmrhub_written,
        left=left,
        configs=card_configs(folder) if repo_type == "dataset" else {},
    )


def card_configs(folder: Path) -> dict:
    """Config name -> the data file patterns its card's ``configs:`` declares (``corpus/test-*``)."""
    found = {}
    for config in read_card(folder / "README.md").data.get("configs") or []:
        entries = config.get("data_files") or []
        entries = entries if isinstance(entries, list) else [entries]
        paths = [entry.get("path") if isinstance(entry, dict) else entry for entry in entries]
        paths = [path for item in paths for path in (item if isinstance(item, list) else [item])]
        found[config.get("config_name", "default")] = [path for path in paths if isinstance(path, str)]
    return found


def describe(upload: Upload) -> str:
    """What an upload holds, a line per file, and the folder's files it leaves home."""
    total = sum(size for _, size in upload.files)
    lines = [f"{upload.repo_type} {upload.repo_id}: {len(upload.files)} file(s), {total:,} bytes from {upload.folder}"]
    lines += [f"  {size:>14,}  {path}" for path, size in upload.files]
    if upload.left:
        lines.append(f"not uploaded: {len(upload.left)} file(s) in the folder that `mmrhub export` did not write")
        lines += [f"  {'':>14}  {path}" for path in upload.left]
    if not upload.recorded:
        lines.append(
            f"note: {upload.folder} is not a folder mmrhub wrote, so its files are not recorded as mmrhub's: no later "
            "push deletes them"
        )
    return "\n".join(lines)


def manifest(upload: Upload) -> bytes:
    """The manifest this push writes: the digest of every file it uploads that mmrhub wrote."""
    return manifest_bytes({path: upload.digests[path] for path, _ in upload.files} if upload.recorded else {})


def changes(upload: Upload, remote: Remote) -> Changes:
    """What the push does to the repo's files besides uploading (``Changes``), checked for clashes of a file with a
    folder before anything is sent."""
    sent = {path for path, _ in upload.files} | {MANIFEST}
    manifest = remote.manifest or Manifest()
    deleted, replaced, kept = [], [], []
    for path, now in sorted(remote.files.items()):
        if path == MANIFEST:
            continue
        recorded = manifest.records.get(path)
        ours = recorded is not None and recorded.same_bytes(now)
        if path in sent:
            if not ours and not upload.digests[path].same_bytes(now):
                replaced.append((path, _not_ours(recorded, path in manifest.legacy)))
        elif path in KEPT or not ours:
            why = _not_ours(recorded, path in manifest.legacy) if recorded or path in manifest.legacy else ""
            kept.append((path, why))
        else:
            deleted.append(path)
    _check_no_file_on_folder(upload, remote, sent, [path for path, _ in kept])
    return Changes(deleted, replaced, kept)


def _not_ours(recorded, legacy: bool) -> str:
    """Why a file on the Hub is not as a push of ours left it."""
    if recorded is not None:
        return "changed on the Hub since our push"
    if legacy:
        return "listed by an older mmrhub push, which recorded no blob ids"
    return "not written by an mmrhub push"


def _check_no_file_on_folder(upload: Upload, remote: Remote, sent: set, kept: list):
    # the Hub refuses a file where a folder is (or the reverse); said before anything is sent, naming both
    clash = [path for path in remote.files if path == MANIFEST_FOLDER or path.startswith(MANIFEST + "/")]
    if clash:
        raise ValueError(
            f"{upload.repo_id} has a file {clash[0]} where mmrhub push keeps its manifest ({MANIFEST}); no mmrhub "
            "push wrote it, so the push will not replace it. Rename or delete it on the Hub, and push again."
        )
    remote_folders = {folder: path for path in kept for folder in _folders(path)}
    local_folders = {folder: path for path in sent for folder in _folders(path)}
    for path in sorted(sent & set(remote_folders)):
        raise ValueError(
            f"{upload.folder / path} is a file, but {upload.repo_id} has a folder {path}/ holding "
            f"{remote_folders[path]}, which the push keeps: rename the file in the export, or move that folder on "
            "the Hub, and push again."
        )
    for path in sorted(set(kept) & set(local_folders)):
        raise ValueError(
            f"{upload.folder / path} is a folder, but {upload.repo_id} has a file {path}, which the push keeps: "
            "rename the folder in the export, or move that file on the Hub, and push again."
        )


def _folders(path: str) -> list:
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def read_remote(upload: Upload, api: HfApi) -> Remote:
    """The repo's files now (each with its digest), the commit they are read at, and its manifest (an empty
    ``Remote`` for a repo that does not exist yet); the Hub's errors pass through."""
    from huggingface_hub.errors import RepositoryNotFoundError
    from huggingface_hub.hf_api import RepoFile

    try:
        head = api.repo_info(upload.repo_id, repo_type=upload.repo_type).sha
    except RepositoryNotFoundError:
        return Remote()
    tree = api.list_repo_tree(upload.repo_id, repo_type=upload.repo_type, revision=head, recursive=True)
    files = {entry.path: hub_digest(entry) for entry in tree if isinstance(entry, RepoFile)}
    if MANIFEST not in files:
        return Remote(files=files, head=head, exists=True)
    local = api.hf_hub_download(upload.repo_id, MANIFEST, repo_type=upload.repo_type, revision=head)
    found = parse_manifest(Path(local).read_bytes(), f"{upload.repo_id}/{MANIFEST}")
    return Remote(files=files, manifest=found, head=head, exists=True)


def remote_state(upload: Upload, token: Optional[str] = None) -> Remote:
    """``read_remote`` for a dry run: a Hub that cannot be reached is said, not raised."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        return read_remote(upload, HfApi(token=token or get_token()))
    except (OSError, HfHubHTTPError, *connection_errors()) as err:  # offline mode, no connection, refused
        return Remote(unknown=f"cannot list {upload.repo_id} now ({type(err).__name__})")


def describe_remote(upload: Upload, remote: Remote, dry_run: bool = False, force: bool = False) -> str:
    """What the push does (or, ``dry_run``, would do) to the repo's files: a line per file deleted, replaced though
    no push of ours left it as it is, and kept."""
    would = "would be " if dry_run else ""
    if remote.unknown:
        return (
            f"on the Hub: {remote.unknown}; the push deletes only the files that {MANIFEST} there records and that "
            "still hold the bytes it records (their blob ids), that this upload does not hold; it keeps every other "
            "file, and replaces a file no push of ours left as it is only with --force"
        )
    if not remote.exists:
        return f"on the Hub: {upload.repo_id} does not exist yet (or is private to another account): nothing to delete"
    found = changes(upload, remote)
    if remote.manifest is None:
        why = f"no {MANIFEST}: no file there was written by an mmrhub push"
    elif remote.manifest.legacy:
        why = f"the {MANIFEST} there is an older mmrhub push's, which recorded no blob ids"
    else:
        why = f"written by an earlier mmrhub push ({MANIFEST}), unchanged since, and not in this upload"
    summary = f"on the Hub: {len(found.deleted)} file(s) {would}deleted ({why}), "
    if found.replaced:
        how = "replaced with --force" if force else "replaced only with --force"
        summary += f"{len(found.replaced)} {would}{how} (not as our last push left them), "
    lines = [summary + f"{len(found.kept)} kept (not replaced)"]
    lines += [f"  delete  {path}" for path in found.deleted]
    lines += [f"  replace {path}  ({why})" for path, why in found.replaced]
    lines += [f"  keep    {path}{f'  ({why})' if why else ''}{read_with(upload, path)}" for path, why in found.kept]
    return "\n".join(lines)


def read_with(upload: Upload, path: str) -> str:
    """For a kept file the card's configs read (a stale shard an older push left): that it is, and what to do."""
    for config, patterns in upload.configs.items():
        if any(fnmatchcase(path, pattern) for pattern in patterns):
            return f"  (load_dataset reads it with config {config}: delete it on the Hub if it is not part of it)"
    return ""


def connection_errors() -> tuple:
    """What the HTTP library ``huggingface_hub`` uses (requests, httpx or its fork) raises when the Hub cannot be
    reached: no connection, refused, timed out."""
    library = sys.modules[type(get_session()).__module__.split(".")[0]]
    found = [getattr(library, name, None) for name in ("TransportError", "ConnectionError", "Timeout")]
    # httpx's base, requests' two; httpx's own ``Timeout`` is a setting, not an error
    return tuple(error for error in found if isinstance(error, type) and issubclass(error, Exception))


def push(upload: Upload, private: bool = False, token: Optional[str] = None, force: bool = False) -> tuple:
    """Create the repo (kept if it exists) and commit in one commit the folder's files, the manifest and the
    deletion of the files an earlier push of ours wrote, unchanged since, that this one does not hold; returns
    (URL, the ``Remote`` it found). ``force``: also replace files no push of ours left as they are."""
    token = token or get_token()
    if not token:
        raise PermissionError("No Hugging Face token: set HF_TOKEN (a write token) or run `hf auth login`.")
    api = HfApi(token=token)
    try:
        return _commit(api, upload, private, force)
    except connection_errors() as err:
        raise ConnectionError(
            f"Cannot reach the Hugging Face Hub at {api.endpoint} to push {upload.repo_id} ({err}); no commit was "
            "made. Check the network (and HF_ENDPOINT), then run the push again."
        ) from err


def _commit(api: HfApi, upload: Upload, private: bool, force: bool) -> tuple:
    from huggingface_hub.errors import HfHubHTTPError

    extra = {"space_sdk": SPACE_SDK} if upload.repo_type == "space" else {}
    url = api.create_repo(upload.repo_id, repo_type=upload.repo_type, private=private, exist_ok=True, **extra)
    remote = read_remote(upload, api)
    found = changes(upload, remote)
    if found.replaced and not force:
        named = ", ".join(f"{path} ({why})" for path, why in found.replaced[:3])
        more = f" and {len(found.replaced) - 3} more" if len(found.replaced) > 3 else ""
        raise ValueError(
            f"{upload.repo_id} holds {len(found.replaced)} file(s) this push would replace that no push of ours left "
            f"as they are: {named}{more}. Nothing was sent. Bring their changes into the export, or pass --force "
            "to replace them (--dry-run lists them)."
        )
    # Exact paths, never patterns: a name holding `*`, `?` or `[` deletes that one file.
    operations = [CommitOperationDelete(path_in_repo=path, is_folder=False) for path in found.deleted]
    operations += [
        CommitOperationAdd(path_in_repo=path, path_or_fileobj=upload.folder / path) for path, _ in upload.files
    ]
    operations.append(CommitOperationAdd(path_in_repo=MANIFEST, path_or_fileobj=manifest(upload)))
    try:
        api.create_commit(
            repo_id=upload.repo_id,
            repo_type=upload.repo_type,
            operations=operations,
            commit_message=f"Upload {upload.folder.name} with mmrhub",
            parent_commit=remote.head,
        )
    except HfHubHTTPError as err:
        if getattr(err.response, "status_code", None) != 412:
            raise
        raise ValueError(
            f"{upload.repo_id} changed on the Hub while this push read it (a commit after {remote.head[:12]}): "
            "nothing was committed. Run the push again, --dry-run first to see what it now does."
        ) from None
    return str(url), remote
