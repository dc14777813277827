"""Embed, retrieve and score: the code behind ``mmrhub retrieve`` and ``scripts/embed_retrieve.py``.

``options`` is torch-free; every other module here needs the ``retrieve`` extra (torch and friends).
"""
