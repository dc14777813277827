"""A Hub repo kept in a local folder, behind the ``HfApi`` calls ``mmrhub push`` makes: the commit applies
huggingface_hub's own operation objects (a deletion of a file that is not there is an error, as on the Hub)."""

import shutil
from pathlib import Path

import httpx2
from huggingface_hub import CommitOperationAdd
from huggingface_hub import CommitOperationDelete
from huggingface_hub.errors import RepositoryNotFoundError


class HubFolder:
    """``HfApi(token=...)``'s stand-in: the repo is ``root``; ``commits`` records each commit's operations."""

    endpoint = "https://huggingface.co"

    def __init__(self, root: Path):
        self.root = root
        self.commits = []

    def __call__(self, token=None):  # replaces the HfApi class: HfApi(token=...) -> this repo
        return self

    def files(self) -> list:
        return sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())

    def create_repo(self, repo_id, repo_type, private=False, exist_ok=False, **extra):
        self.root.mkdir(parents=True, exist_ok=True)
        return f"https://huggingface.co/{'datasets/' if repo_type == 'dataset' else 'spaces/'}{repo_id}"

    def list_repo_files(self, repo_id, repo_type=None):
        if not self.root.is_dir():
            request = httpx2.Request("GET", f"{self.endpoint}/api/{repo_type}s/{repo_id}")
            raise RepositoryNotFoundError("404", response=httpx2.Response(404, request=request))
        return self.files()

    def hf_hub_download(self, repo_id, filename, repo_type=None):
        return str(self.root / filename)

    def create_commit(self, repo_id, repo_type, operations, commit_message):
        self.commits.append(operations)
        for op in operations:
            target = self.root / op.path_in_repo
            if isinstance(op, CommitOperationDelete):
                assert not op.is_folder and target.is_file(), op  # the Hub refuses to delete what is not there
                target.unlink()
                for parent in target.parents:  # git holds no empty folders
                    if parent == self.root or any(parent.iterdir()):
                        break
                    parent.rmdir()
            else:
                assert isinstance(op, CommitOperationAdd)
                target.parent.mkdir(parents=True, exist_ok=True)
                with op.as_file() as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
