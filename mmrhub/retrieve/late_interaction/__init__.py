"""Late interaction: models that give one vector per kept token, searched by exact MaxSim.

``maxsim`` packs kept tokens and searches them exactly; ``tokens`` keeps, caches and gathers them in the pipeline;
``preflmr`` is the one such model today (PreFLMR from transformers' own parts). Nothing here imports the
single-vector encoders (``retrieve/encoders.py``).
"""
