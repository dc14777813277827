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
    """Strings as one UTF-8 byte buffer: string i is ``data[starts[i] : starts[i] + sizes[i]]``."""

    def __init__(self, data, starts, sizes):
        self.data, self.starts, self.sizes = data, starts, sizes

    def item(self, i):
        start = int(self.starts[i])
        return bytes(self.data[start : start + int(self.sizes[i])]).decode("utf-8")


def arrow_strings(strings):
    """A non-null pa.StringArray -> FlatStrings, without copying the bytes."""
    offsets = np.frombuffer(strings.buffers()[1], np.int32, len(strings) + 1, 4 * strings.offset).astype(np.int64)
    data = strings.buffers()[2]
    data = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return FlatStrings(data, offsets[:-1], np.diff(offsets))


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
    return counts, FlatStrings(data, starts, np.concatenate([ends, [len(data)]])[:count] - starts)


def string_words(strings):
    """FlatStrings -> n x W uint64 words of each string's bytes, zero-padded, W = the longest's word count (>= 1).

    Two strings are equal iff their sizes and words are.
    """
    sizes, starts = strings.sizes, strings.starts
    width = max(-(-int(sizes.max(initial=0)) // 8), 1)
    if len(sizes) > 1 and (sizes == sizes[0]).all() and (np.diff(starts) == starts[1] - starts[0]).all():
        # same-size ids at a fixed stride (the usual case): a strided view is the byte matrix
        size, stride = int(sizes[0]), int(starts[1] - starts[0])
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
    hashes = sizes.astype(np.uint64) * _multiplier(seed, 0)
    for w in range(words.shape[1]):
        hashes += words[:, w] * _multiplier(seed, w + 1)
    return hashes


def same_strings(words_a, sizes_a, words_b, sizes_b):
    """Elementwise equality of aligned strings given as (words, sizes), of possibly different word widths."""
    equal = sizes_a == sizes_b
    for w in range(min(words_a.shape[1], words_b.shape[1])):  # equal sizes need no word past the narrower
        equal &= words_a[:, w] == words_b[:, w]
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
        counts = np.bincount((keys >> self.shift).astype(np.int64), minlength=self.num_buckets)
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
            hit = key == wanted
            found[pending[hit]] = at[hit]
            pending = pending[(key < wanted) & (count[pending] > step + 1)]
            step += 1
        return found


class StringIndex:
    """Distinct strings -> codes 0..n-1 in hash order, where distinct strings differ in their hashes' top ``bits``.

    The first of equal strings gets the code. With the top bits unique, a string's top hash bits name the
    only indexed string it can be, which ``same_strings`` then confirms.
    """

    def __init__(self, strings, bits=64):
        words = string_words(strings)
        self.bits = bits
        for seed in range(_SEEDS):
            hashes = string_hashes(words, strings.sizes, seed)
            order = np.argsort(hashes, kind="stable")  # stable: the first of equal strings leads
            top = hashes[order] >> np.uint64(64 - bits)
            tie = np.flatnonzero(top[1:] == top[:-1])
            first, second = order[tie], order[tie + 1]
            # equal top bits of equal strings are repeats; of different strings, a collision: try the next seed
            if same_strings(words[first], strings.sizes[first], words[second], strings.sizes[second]).all():
                break
        else:
            raise RuntimeError(f"no string hash seed in {_SEEDS} keeps {bits} bits distinct")
        self.seed = seed
        keep = np.ones(len(order), dtype=bool)
        keep[tie + 1] = False
        entry = order[keep]  # code -> position of the string's first occurrence
        self.code = np.full(len(order), -1, dtype=np.int64)  # position -> code, -1 for later repeats
        self.code[entry] = np.arange(len(entry))
        self.top = top[keep]
        self.words, self.sizes = words[entry], strings.sizes[entry]

    def __len__(self):
        return len(self.top)

    def hash(self, strings):
        """(words, top ``bits`` of the hash) of other strings, hashed like the indexed ones."""
        words = string_words(strings)
        return words, string_hashes(words, strings.sizes, self.seed) >> np.uint64(64 - self.bits)


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
    matrix = np.full(len(lengths) * width, np.iinfo(np.int64).max)
    matrix[cells] = values
    return np.sort(matrix.reshape(len(lengths), width), axis=1).ravel()[cells]


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


def pair_bits(num_rows):
    """Hash bits a StringIndex keeps for PairIndex: what a 64-bit key leaves once the row index has its bits."""
    return 64 - max(num_rows.bit_length(), 1)


class PairIndex:
    """Distinct (row, string) pairs as sorted uint64 keys: the row's bits, then the string's top hash bits.

    ``lengths`` strings per row, given as codes of ``index`` (built with ``pair_bits(len(lengths))``). Codes
    follow hash order, so sorting each row's codes sorts the keys; ``order`` maps a pair back to its input
    position and ``repeat`` is the input position of the first pair given twice (None if none is).
    """

    def __init__(self, lengths, codes, index):
        self.index = index
        packed = (codes.astype(np.int64) << 32) | np.arange(len(codes), dtype=np.int64)  # ties keep input order
        self.order = sort_within_rows(lengths, packed) & 0xFFFFFFFF
        self.code = codes[self.order]
        self.row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)  # grouped: row[order] == row
        keys = self._keys(self.row, index.top[self.code])
        twice = np.flatnonzero(keys[1:] == keys[:-1])
        self.repeat = int(self.order[twice[0] + 1]) if len(twice) else None
        self.keys = SortedKeys(keys)

    def _keys(self, rows, top):
        return (rows.astype(np.uint64) << np.uint64(self.index.bits)) | top

    def match(self, rows, strings):
        """(pair position of each (row, string), -1 where absent; the strings' top hash bits)."""
        words, top = self.index.hash(strings)
        at = self.keys.find(self._keys(rows, top))
        found = np.flatnonzero(at >= 0)
        code = self.code[at[found]]
        # equal hash bits name the only indexed string each can be; the bytes say whether it is
        same = same_strings(words[found], strings.sizes[found], self.index.words[code], self.index.sizes[code])
        at[found[~same]] = -1
        return at, top
