"""The evaluate metric folders (``mipr/``, ``m2kr/``), importable as ``mmrhub.metrics`` when mmrhub is installed:
``evaluate.load(str(METRICS / "mipr"))`` loads one from an installed package."""

from pathlib import Path

METRICS = Path(__file__).resolve().parent
