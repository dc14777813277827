"""What a data generator wrote, one line a file or group of files: its path, what it holds, its bytes."""

from pathlib import Path


def print_written(out: Path, entries):
    """Print ``entries``, each (label, files, what they hold), with their bytes and the total."""
    lines, total, count = [], 0, 0
    for label, files, holds in entries:
        size = sum(Path(file).stat().st_size for file in files)
        total, count = total + size, count + len(files)
        lines.append(f"  {label:<48} {holds:<34} {size:>17,} bytes")
    print(f"wrote {out}: {count:,} files, {total:,} bytes")
    print("\n".join(lines))
