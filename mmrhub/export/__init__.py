"""Writing a benchmark as a script-free Hub dataset repo: Parquet per config, images embedded, and a card."""
