"""The benchmarks, one module each (``mipr``, ``m2kr``): commands read these declarations and never branch on a
benchmark's name.

Importing this package is cheap: the builders (which import ``datasets``, about a second) are imported only by
``Benchmark.builder()``, which only the commands that build a dataset call; scoring reads the tables directly.
"""

from mmrhub.benchmarks.m2kr import M2KR
from mmrhub.benchmarks.mipr import MIPR

BENCHMARKS = {benchmark.name: benchmark for benchmark in (MIPR, M2KR)}
