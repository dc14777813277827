"""Runs compared pair by pair: the paired randomisation test (``significance``), its corrections for many pairs
(``corrections``) and the comparison they make (``comparison``)."""
