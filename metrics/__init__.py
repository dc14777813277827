"""The evaluate metric folders, importable as ``mmrhub.metrics.<name>`` when mmrhub is installed."""
