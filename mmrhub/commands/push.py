"""``mmrhub push``: publish an exported dataset folder, or a metric folder or a leaderboard board as a Space, with
``huggingface_hub``."""

from pathlib import Path

from mmrhub.benchmarks import BENCHMARKS
from mmrhub.metrics import METRICS


def register(subparsers):
    """Add ``push``."""
    parser = subparsers.add_parser("push", help="upload an exported dataset repo or a metric folder (as a Space)")
    parser.add_argument(
        "folder",
        help="an `mmrhub export` folder, or a metric folder: a path, or its name (mipr, m2kr) for the one installed "
        "with mmrhub",
    )
    parser.add_argument("repo_id", help="org/name on the Hub")
    parser.add_argument("--repo-type", help="dataset or space (default: space for a folder with app.py, else dataset)")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="list what would be uploaded, deleted (what an earlier push wrote, unchanged since), replaced and kept "
        "on the Hub; change nothing",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace files on the Hub that no push of ours left as they are (edited on the Hub, or never ours)",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    """Upload an export or a metric folder (or list what would be uploaded)."""
    from mmrhub.export.push import describe  # imports huggingface_hub: only when pushing
    from mmrhub.export.push import describe_remote
    from mmrhub.export.push import plan
    from mmrhub.export.push import push
    from mmrhub.export.push import remote_state

    folder = metric_folder(args.folder)
    upload = plan(folder, args.repo_id, repo_type=args.repo_type, mmrhub_written=written_by_mmrhub(folder))
    print(describe(upload))
    if args.dry_run:
        print(describe_remote(upload, remote_state(upload), dry_run=True, force=args.force))
        print("dry run: nothing uploaded, nothing deleted")
        return 0
    url, remote = push(upload, private=args.private, force=args.force)
    print(describe_remote(upload, remote, force=args.force))
    print(f"uploaded to {url}")
    return 0


def metric_folder(folder: str) -> str:
    """``folder`` itself when it exists; else a benchmark's name (``mipr``) or a checkout's ``metrics/mipr`` names
    the metric folder installed with mmrhub, so the command works from any folder."""
    if Path(folder).exists():
        return folder
    name = Path(folder).name
    if name in BENCHMARKS and (METRICS / name).is_dir():
        return str(METRICS / name)
    return folder


def written_by_mmrhub(folder: str) -> bool:
    """Whether a Space folder's files are mmrhub's to record as its own (so that a later push may delete what it
    wrote): a metric folder installed with mmrhub, or a board ``mmrhub leaderboard`` wrote (its board.json reads as
    one)."""
    from mmrhub.leaderboard.board import read_board

    if installed_metric(folder):
        return True
    try:
        read_board(folder)
    except (OSError, ValueError):
        return False
    return True


def installed_metric(folder: str) -> bool:
    """Whether ``folder`` is a metric folder installed with mmrhub (its files are then mmrhub's)."""
    resolved = Path(folder).resolve()
    return any(resolved == (METRICS / name).resolve() for name in BENCHMARKS)
