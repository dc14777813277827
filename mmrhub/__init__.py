"""Tooling for the MIPR and M2KR retrieval benchmarks: the code behind the ``mmrhub`` command."""

__version__ = "0.1.0"
