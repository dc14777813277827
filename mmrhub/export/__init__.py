"""Writing a benchmark as a script-free Hub dataset repo: Parquet per config, images embedded, and a card."""

FORMATS = ("hf", "mteb")  # hf: the builder's own configs; mteb: MTEB's retrieval layout
