"""The randomisation test's signs: 2 * ``rng.integers(0, 2, size, dtype=np.int8)`` - 1, call after call, as floats.

numpy draws those 0/1 a byte at a time (a function call each); the same values come from the generator's raw
64-bit words, several times faster (bench/README.md, "The test's signs"): each value is the top bit of one
byte of the 32-bit words numpy takes (Lemire's method on a byte, with range 2), each call starting on a fresh
32-bit word, and PCG64 serves those as the low then the high half of each 64-bit word, keeping a high half for
the next call. Used only where a check against numpy's own draws passes (``_raw_words_match_numpy``); elsewhere
numpy draws them, so the stream never changes.
"""

import functools

import numpy as np


class _RawBits:
    """The 0/1 of successive ``rng.integers(0, 2, (rows, count), dtype=np.int8)`` calls, from ``random_raw``."""

    def __init__(self, seed: int):
        self.generator = np.random.default_rng(seed).bit_generator
        self.kept = None  # the unused high half of the last 64-bit word, which the next call starts with

    def __call__(self, rows: int, count: int, out: np.ndarray) -> np.ndarray:
        values = rows * count
        words = -(-values // 4)  # 32-bit words: four values each, a call's last word used in part
        kept = [] if self.kept is None else [self.kept]
        needed = words - len(kept)
        fresh = self.generator.random_raw(-(-needed // 2)).view(np.uint32)
        self.kept = fresh[-1:] if len(fresh) > needed else None
        stream = np.concatenate([*kept, fresh[:needed]]) if kept else fresh
        return np.right_shift(stream.view(np.uint8)[:values].reshape(rows, count), 7, out=out)


@functools.cache
def _raw_words_match_numpy() -> bool:
    """Whether ``_RawBits`` gives numpy's values here: shapes of even and odd word counts, so kept halves too."""
    shapes = [(3, 5), (1, 3), (2, 2), (4, 9), (1, 1), (5, 7), (2, 8)]
    numpy_draws, raw = np.random.default_rng(12345), _RawBits(12345)
    return all(
        np.array_equal(numpy_draws.integers(0, 2, size=shape, dtype=np.int8), raw(*shape, np.empty(shape, np.uint8)))
        for shape in shapes
    )


class SignDraws:
    """Rows of ``count`` ±1.0, drawn from ``seed`` as ``rng.integers(0, 2, dtype=np.int8) * 2 - 1``, at most
    ``rows`` a call."""

    def __init__(self, seed: int, count: int, rows: int):
        self.count = count
        self.raw = _RawBits(seed) if _raw_words_match_numpy() else None
        self.numpy_draws = np.random.default_rng(seed) if self.raw is None else None
        # reused: fresh ones a call cost their page faults
        self.bits = np.empty((rows, count), dtype=np.uint8)
        self.signs = np.empty((rows, count))

    def __call__(self, rows: int) -> np.ndarray:
        """The next ``rows`` draws (a view of the buffer the next call overwrites)."""
        signs = self.signs[:rows]
        if self.raw is None:
            np.multiply(self.numpy_draws.integers(0, 2, size=(rows, self.count), dtype=np.int8), 2.0, out=signs)
            signs -= 1.0
            return signs
        small = self.raw(rows, self.count, self.bits[:rows]).view(np.int8)
        small *= 2  # 0/1 to -1/1 in bytes: then one pass of floats (the cast) instead of three
        small -= 1
        np.copyto(signs, small)
        return signs
