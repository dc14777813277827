"""What every command prints and writes besides its data, by kind: ``tables`` (the scores in Markdown, CSV, LaTeX
or JSON, compare's pairs, baseline's rows beside the paper's), ``captions`` (what is said under or above a table,
and where it goes) and ``payloads`` (the ``--json`` contents, and how they are written)."""
