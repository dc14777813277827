"""Scoring: run files read and written, judgment tables and their cache, the oracle, group means, significance
and tables. Torch-free, and ``datasets`` is imported only to name a failing table's error."""
