"""Exact, vectorised string and key lookups: the judged side is prepared once, each run is a few gathers (numpy only).

Arrow's set lookups rebuild their hash table on every call and numpy's ``searchsorted`` is a branchy
binary search (about 80 ns a key); here the judged side is sorted once and cut into buckets of about one
key each. Strings are held as their UTF-8 bytes in 64-bit words: hashes only pick where to look, every
match is confirmed on the bytes, so no result depends on luck.
"""

import numpy as np

_WORD = np.dtype("<u8")
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # [n]: a word's first n bytes
_MASK64 = (1 << 64) - 1
_SEEDS = 4


class FlatStrings:
    """Strings as one UTF-8 byte buffer: string i is ``data[starts[i] : starts[i] + sizes[i]]``, each string
    ``gap`` bytes after the one before it."""

    def __init__(self, data, starts, sizes, gap):
        self.data, self.starts, self.sizes, self.gap = data, starts, sizes, gap

    def item(self, i):
        start = int(self.starts[i])
        return bytes(self.data[start : start + int(self.sizes[i])]).decode("utf-8")


def arrow_strings(strings):
    """A non-null pa.StringArray -> FlatStrings, without copying the bytes (int32 offsets, as Arrow's)."""
    offsets = np.frombuffer(strings.buffers()[1], np.int32, len(strings) + 1, 4 * strings.offset)
    data = strings.buffers()[2]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return FlatStrings(data, offsets[:-1], np.diff(offsets), gap=0)


def joined_strings(rows, depth):
    """The first ``depth`` strings of each Python list -> (counts per row, FlatStrings), or None where that
    cannot be trusted (a non-string, or an id holding NUL).

    One ``"\\0".join`` per row and one over the rows read each string once, several times faster than
    building an Arrow array.
    """
    counts = np.minimum(np.fromiter(map(len, rows), np.int64, len(rows)), depth)
    try:
        text = "\0".join(["\0".join(row[:depth]) for row in rows if row])
        data = np.frombuffer(text.encode("utf-8"), np.uint8)
    except (TypeError, UnicodeEncodeError):
        return None
    count = int(counts.sum())
    ends = np.flatnonzero(data == 0)
    if len(ends) != max(count - 1, 0):
        return None
    starts = np.concatenate([[0], ends + 1])[:count]
    return counts, FlatStrings(data, starts, np.concatenate([ends, [len(data)]])[:count] - starts, gap=1)


def string_words(strings):
    """FlatStrings -> n x W uint64 words of each string's bytes, zero-padded, W = the longest's word count (>= 1).

    Two strings are equal iff their sizes and words are.
    """
    sizes, starts = strings.sizes, strings.starts
    width = max(-(-int(sizes.max(initial=0)) // 8), 1)
    if len(sizes) > 1 and (sizes == sizes[0]).all():
        # same-size ids, so at a fixed stride (the usual case): a strided view is the byte matrix
        size = int(sizes[0])
        stride = size + strings.gap
        block = np.zeros((len(sizes), 8 * width), np.uint8)
        block[:, :size] = np.lib.stride_tricks.as_strided(strings.data[starts[0] :], (len(sizes), size), (stride, 1))
        return block.view(_WORD)
    data = np.concatenate([strings.data, np.zeros(8, np.uint8)])
    # an unaligned 8-byte load at every byte offset; each word keeps only the bytes its string has left
    loads = np.ndarray((len(data) - 7,), dtype=_WORD, buffer=data, strides=(1,))
    words = np.empty((len(sizes), width), _WORD)
    for w in range(width):
        left = np.clip(sizes - 8 * w, 0, 8)
        words[:, w] = loads[np.minimum(starts + 8 * w, len(loads) - 1)] & _LOW_BYTES[left]
    return words


def _multiplier(seed, w):
    """An odd 64-bit constant per (seed, word index), from splitmix64: the same whatever the word count."""
    x = (0x9E3779B97F4A7C15 * (seed * 1_000_003 + w + 1)) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return np.uint64((x ^ (x >> 31)) | 1)


def string_hashes(words, sizes, seed):
    """Multiplicative 64-bit hash of each string's size and words (zero padding words add nothing)."""
    hashes = sizes.astype(np.uint64)
    hashes *= _multiplier(seed, 0)
    term = np.empty_like(hashes)  # in place throughout: fresh large arrays cost page faults
    for w in range(words.shape[1]):
        hashes += np.multiply(words[:, w], _multiplier(seed, w + 1), out=term)
    return hashes


def same_strings(words_a, sizes_a, at_a, words_b, sizes_b, at_b):
    """Whether string ``at_a[i]`` of (words_a, sizes_a) equals string ``at_b[i]`` of (words_b, sizes_b);
    the word widths may differ. Gathers go one word column at a time, several times faster than row gathers."""
    equal = sizes_a[at_a] == sizes_b[at_b]
    for w in range(min(words_a.shape[1], words_b.shape[1])):  # equal sizes need no word past the narrower
        equal &= words_a[:, w][at_a] == words_b[:, w][at_b]
    return equal


class SortedKeys:
    """Sorted distinct uint64 keys cut into about len(keys) buckets of equal key ranges.

    ``find`` reads one key per bucket entry it passes, so it is fast when keys spread evenly over their
    range (they hold hash bits here) and exact in any case.
    """

    def __init__(self, keys):
        self.keys = keys
        top = int(keys[-1]) if len(keys) else 0
        self.shift = np.uint64(max(top.bit_length() - len(keys).bit_length(), 0))
        self.num_buckets = (top >> int(self.shift)) + 1
        counts = np.bincount((keys >> self.shift).view(np.int64), minlength=self.num_buckets)
        # a last, empty bucket takes every needle above the largest key
        self.starts = np.concatenate([[0], np.cumsum(counts), [len(keys)]]).astype(np.int32)

    def find(self, needles):
        """uint64 needles -> their index in ``keys``, -1 where absent."""
        bucket = np.minimum(needles >> self.shift, np.uint64(self.num_buckets)).astype(np.int64)
        start = self.starts[bucket]
        count = self.starts[bucket + 1] - start
        found = np.full(len(needles), -1, dtype=np.int64)
        pending = np.flatnonzero(count)
        step = 0
        while len(pending):
            at = start[pending] + step
            key, wanted = self.keys[at], needles[pending]
            hit = np.flatnonzero(key == wanted)  # index selections: hard-to-predict masks cost more
            found[pending[hit]] = at[hit]
            pending = pending[np.flatnonzero((key < wanted) & (count[pending] > step + 1))]
            step += 1
        return found


def flat_cells(lengths, width):
    """Flat index of each element's cell in a row-major (rows x width) matrix."""
    starts = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(np.arange(len(lengths)) * width - starts, lengths)


def sort_within_rows(lengths, values):
    """Each row's values (int64 below the int64 maximum) sorted ascending, rows kept in order.

    Sorting the rows of a padded matrix is several times faster than one flat sort of (row, value) keys, so
    it is used unless the rows' lengths vary so much that padding would dominate.
    """
    count, width = int(lengths.sum()), int(lengths.max(initial=0))
    if len(lengths) * width > 2 * count:
        return values[np.lexsort((values, np.repeat(np.arange(len(lengths)), lengths)))]
    cells = flat_cells(lengths, width)
    matrix = np.full((len(lengths), width), np.iinfo(np.int64).max)
    matrix.ravel()[cells] = values
    matrix.sort(axis=1)
    return matrix.ravel()[cells]


def first_repeat(lengths, strings, hashes, cells, width):
    """(row, earlier position, later position, string) of the first string listed twice in a row, or None.

    Each row's hashes are sorted side by side in a (rows x width) matrix (``cells`` places them); only rows
    where two hashes meet are compared as strings, so a collision costs a look, never a wrong verdict.
    """
    matrix = np.tile(np.arange(width, dtype=np.uint64), len(lengths))  # fillers for short rows
    matrix[cells] = hashes
    ordered = np.sort(matrix.reshape(len(lengths), width), axis=1)
    starts = np.cumsum(lengths) - lengths
    for row in np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1)):
        seen = {}
        for pos in range(int(lengths[row])):
            item = strings.item(starts[row] + pos)
            if item in seen:
                return int(row), seen[item], pos, item
            seen[item] = pos
    return None


class PairIndex:
    """Distinct (row, string) pairs as sorted uint64 keys: the row's bits, then the string's top hash bits.

    ``lengths`` strings per row, grouped by row. ``order`` maps a key back to its pair's input position;
    ``repeat`` is the input position of a pair given twice (the later of the first such two), None if none
    is. Distinct strings of one row never share their top hash bits (a hash seed is chosen so), so a
    string's key names the only pair it can be, which its bytes then confirm.
    """

    def __init__(self, lengths, strings):
        self.words, self.sizes = string_words(strings), strings.sizes
        position_bits = max(len(self.sizes).bit_length(), 1)
        # a row's keys are sorted by sorting (hash bits, position) packed into one int64
        self.bits = min(64 - max(len(lengths).bit_length(), 1), 63 - position_bits)
        self.row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        row_keys = self.row.astype(np.uint64)
        row_keys <<= np.uint64(self.bits)
        positions = np.arange(len(self.sizes), dtype=np.int64)
        for seed in range(_SEEDS):
            packed = string_hashes(self.words, self.sizes, seed)
            packed >>= np.uint64(64 - self.bits)
            packed = packed.view(np.int64)
            packed <<= position_bits
            packed |= positions
            ordered = sort_within_rows(lengths, packed)
            self.order = ordered & ((1 << position_bits) - 1)
            ordered >>= position_bits
            keys = ordered.view(np.uint64)
            keys |= row_keys  # rows are grouped, so the keys come out sorted
            tie = np.flatnonzero(keys[1:] == keys[:-1])
            first, second = self.order[tie], self.order[tie + 1]
            # equal keys of equal strings are repeats; of different strings, a collision: try the next seed
            if same_strings(self.words, self.sizes, first, self.words, self.sizes, second).all():
                break
        else:
            raise RuntimeError(f"no string hash seed in {_SEEDS} keeps {self.bits} bits distinct within a row")
        self.seed = seed
        self.repeat = int(second[0]) if len(second) else None
        self.keys = SortedKeys(keys)

    def _keys(self, rows, top):
        return (rows.astype(np.uint64) << np.uint64(self.bits)) | top

    def match(self, rows, strings):
        """(pair position of each (row, string) in key order, -1 where absent; the strings' hashes)."""
        words = string_words(strings)
        hashes = string_hashes(words, strings.sizes, self.seed)
        at = self.keys.find(self._keys(rows, hashes >> np.uint64(64 - self.bits)))
        found = np.flatnonzero(at >= 0)
        same = same_strings(words, strings.sizes, found, self.words, self.sizes, self.order[at[found]])
        at[found[~same]] = -1
        return at, hashes
