"""Embed, retrieve, rerank and score: the library behind ``mmrhub retrieve``, ``rerank`` and ``baseline``.

The commands fill the frozen options of ``options`` and call ``pipeline.run`` or ``rerank.pipeline.run``.
``options``, ``run_files`` and ``finite`` are torch-free at import; every other module here needs the ``retrieve``
extra (torch and friends). Nothing here imports ``mmrhub.benchmarks`` or ``mmrhub.commands``: the benchmark's
declaration comes in the options.
"""
