"""MIPR and M2KR in MTEB 2: retrieval tasks over an MTEB export (``tasks``), MTEB's saved predictions turned into a
run the benchmark's metrics score (``predictions``), and ``mmrhub mteb`` (``pipeline``), which does both for any MTEB
model.

    from mmrhub.mteb import MIPRIT2ITRetrieval, M2KRIT2ITRetrieval

Importing this package is cheap: mteb (seconds to import) is imported when a task class is first asked for.
"""

_TASK_NAMES = ("MIPRIT2ITRetrieval", "M2KRIT2ITRetrieval", "ExportRetrieval", "TASKS")
__all__ = list(_TASK_NAMES)


def __getattr__(name: str):
    """The task classes, from ``mmrhub.mteb.tasks`` (and with it mteb) on first use."""
    if name in _TASK_NAMES:
        from mmrhub.mteb import tasks

        return getattr(tasks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
