"""Run files: their bytes (``source``), one module per format (``official_json``, ``trec``, ``kaggle``,
``ranx_dict``), trec_eval's order (``order``), the reader that picks the format (``reading``), the checks against the
judgments (``validation``) and the writer (``writing``); ``run`` holds the shape every reader returns."""
