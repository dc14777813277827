"""MIPR and M2KR in MTEB 2: retrieval tasks over an MTEB export (``tasks``), MTEB's saved predictions turned into a
run the benchmark's metrics score (``predictions``), and ``mmrhub mteb`` (``pipeline``), which does both for any MTEB
model.

    from mmrhub.mteb import MIPRIT2ITRetrieval, M2KRIT2ITRetrieval

Importing this package is cheap: mteb (seconds to import) is imported when a task class is first asked for.

This door is the wing's one module that reads the benchmarks' registry (``mmrhub.benchmarks.BENCHMARKS``): it
offers each benchmark's task class under its task's name; the wing's modules take the declaration they are given.
"""

__all__ = ["MIPRIT2ITRetrieval", "M2KRIT2ITRetrieval", "ExportRetrieval", "TASKS"]


def __getattr__(name: str):
    """The task classes, from ``mmrhub.mteb.tasks`` (and with it mteb) on first use: ``TASKS`` (benchmark name ->
    class), each class by its task's name, and their base ``ExportRetrieval``."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mmrhub.benchmarks import BENCHMARKS
    from mmrhub.mteb import tasks

    classes = {benchmark.name: tasks.task_class(benchmark) for benchmark in BENCHMARKS.values()}
    offered = {"TASKS": classes, "ExportRetrieval": tasks.ExportRetrieval}
    return {**offered, **{task.__name__: task for task in classes.values()}}[name]
