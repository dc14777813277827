"""``mmrhub push``: publish an exported dataset folder, or a metric folder as a Space, with ``huggingface_hub``."""


def register(subparsers):
    """Add ``push``."""
    parser = subparsers.add_parser("push", help="upload an exported dataset repo or a metric folder (as a Space)")
    parser.add_argument("folder", help="an `mmrhub export` folder, or metrics/mipr / metrics/m2kr")
    parser.add_argument("repo_id", help="org/name on the Hub")
    parser.add_argument("--repo-type", help="dataset or space (default: space for a folder with app.py, else dataset)")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded; touch nothing")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Upload an export or a metric folder (or list what would be uploaded)."""
    from mmrhub.export.push import describe  # imports huggingface_hub: only when pushing
    from mmrhub.export.push import plan
    from mmrhub.export.push import push

    upload = plan(args.folder, args.repo_id, repo_type=args.repo_type)
    print(describe(upload))
    if args.dry_run:
        print("dry run: nothing uploaded")
        return 0
    url = push(upload, private=args.private)
    print(f"uploaded to {url}")
    return 0
