"""The benchmarks mmrhub knows, each backed by its standalone builder module (``mipr.py``, ``m2kr.py``)."""

import importlib
from types import ModuleType

BENCHMARKS = ("mipr", "m2kr")


def builder_module(benchmark: str) -> ModuleType:
    """The builder module of a benchmark; it exposes ``CONFIG_NAMES``, ``SAMPLE_DIR`` and ``load()``."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"Unknown benchmark {benchmark!r}; expected one of {', '.join(BENCHMARKS)}.")
    return importlib.import_module(benchmark)
