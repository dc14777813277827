"""How many cores this process may use: the one count every thread pool and worker default starts from."""

import os


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; the machine's count where that cannot be told)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1
