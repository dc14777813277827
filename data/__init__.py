"""The bundled samples in the official layouts (``mipr/``, ``m2kr/``), importable as ``mmrhub.data`` so that an
installed mmrhub finds them; see README.md here."""

from pathlib import Path

SAMPLES = Path(__file__).resolve().parent
