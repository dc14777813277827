"""Writing a benchmark as a script-free Hub dataset repo (Parquet per config, images embedded, and a card), or its
judgments as trec_eval qrels files."""

FORMATS = ("hf", "mteb", "trec")  # hf: the builder's own configs; mteb: MTEB's retrieval layout; trec: qrels files
