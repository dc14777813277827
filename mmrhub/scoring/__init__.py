"""Scoring: run files read and written (``runs/``), judgment tables and their cache, the oracle, group means,
runs compared pair by pair (``compare/``), the published table to reproduce, and what is printed (``output/``).
Torch-free, and ``datasets`` is imported only to name a failing table's error."""
