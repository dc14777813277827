"""A run's record, ``RUN.json.meta.json`` beside it: how the run was made (``provenance``), where the record lies and
how it is written and read (``meta``), what a repeated run differs in (``differences``), and whether a model's
weights were random (``random_weights``). It imports no wing: the retrieve and mteb wings write records, ``rerun``
reads them, and the tables say what they hold."""
