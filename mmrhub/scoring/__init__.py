"""Scoring: run files read and written, judgment tables and their cache, the oracle, group means, significance
(the paired test, its corrections, runs compared pair by pair) and tables. Torch-free, and ``datasets`` is
imported only to name a failing table's error."""
