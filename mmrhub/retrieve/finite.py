"""What a model gives back is checked before anything is cached or written.

Every embedding, token vector and score goes through ``check``: each batch ``retrieve`` embeds (every backend and
preset: ``pipeline.embed``), each batch ``rerank`` scores, and every embedding and score ``mmrhub mteb`` gets from
MTEB's model. A model with a NaN weight, a shard of NaNs, an infinite tensor, or an image processor that divides by
an ``image_std`` of 0 gives NaN or infinite values; the command then stops at the first batch holding one, in one line
naming the model and the item, before that batch is kept: no run, no record, no cache entry is written (the corpus
is cached only once the queries are embedded too). The caches never serve an entry holding such values either.
"""

import numpy as np


class NotFinite(ValueError):
    """A model's output holds NaN or infinite values."""


def bad_rows(values) -> list:
    """The rows (first dimension) of a torch tensor, an array or a list of numbers holding NaN or infinity."""
    if hasattr(values, "detach"):  # a torch tensor, on any device
        import torch

        finite = torch.isfinite(values.detach())
        rows = finite.reshape(finite.shape[0], -1).all(dim=1) if finite.ndim > 1 else finite
        return (~rows).nonzero().flatten().tolist()
    array = np.asarray(values, dtype=np.float64)
    rows = np.isfinite(array).reshape(array.shape[0], -1).all(axis=1) if array.ndim > 1 else np.isfinite(array)
    return np.flatnonzero(~rows).tolist()


def all_finite(values) -> bool:
    """Whether every value is a finite number (a cached entry's check)."""
    return not len(values) or not bad_rows(values)


def check(values, model: str, describe=None) -> None:
    """Raise ``NotFinite`` when ``values`` (one row per item) hold NaN or infinity; ``describe(row)`` names an item
    in words ("the corpus item 'p12'"; None: its position in the batch)."""
    bad = bad_rows(values)
    if not bad:
        return
    first = describe(bad[0]) if describe is not None else f"item {bad[0] + 1} of a batch"
    more = f" (and {len(bad) - 1} more of its batch)" if len(bad) > 1 else ""
    raise NotFinite(
        f"{model} gave NaN or infinite values for {first}{more}: its weights, or the config or image processor it "
        "reads, are broken (a NaN or infinite weight, an image_std of 0, ...). Nothing was written or cached. Check "
        "the model's files, or download them again."
    )
