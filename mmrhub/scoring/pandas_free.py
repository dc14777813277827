"""Keep pandas out of the scoring processes.

pyarrow imports pandas (a noticeable share of a scoring call; bench/README.md) the first time it converts
anything to or from numpy, only to recognise pandas objects. Scoring hands it none, so the scoring commands make
``import pandas`` fail (pyarrow then does without), and let it work again before anything that needs pandas is
imported (the builders, through ``datasets``).
"""

import sys
from contextlib import contextmanager


class _NoPandas:
    """A meta path finder (duck-typed, sparing the imports of importlib.abc) that refuses pandas."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is kept out of scoring (mmrhub.scoring.pandas_free)", name=name)
        return None


_FINDER = _NoPandas()


@contextmanager
def kept_out():
    """Within: ``import pandas`` fails, unless pandas is imported already (then this changes nothing)."""
    if "pandas" not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    try:
        yield
    finally:
        unblock()


def unblock() -> None:
    """Let ``import pandas`` work again; pyarrow imports it on its next pandas conversion."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
