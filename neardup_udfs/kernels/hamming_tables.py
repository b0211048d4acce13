"""Multi-table keys for Hamming search over 64-bit fingerprints (Manku, Jain and Das Sarma,
"Detecting near-duplicates for web crawling", WWW 2007).

The 64 bits are split into ``blocks`` contiguous blocks (the boundaries ditto uses for its
``k + 1`` blocks: ``floor(i * 64 / blocks)``), and one table is keyed on every choice of
``blocks - k`` of them. Two fingerprints within ``k`` bits differ in at most ``k`` blocks,
so they agree on all the blocks of at least one table: no pair within ``k`` is missed.

``blocks = k + 1`` is ditto's index: ``k + 1`` tables of one block each, whose keys are
ditto's block values. More blocks make longer keys (fewer chance collisions: short
documents' SimHashes crowd into few 16-bit buckets) at the cost of more tables. The scheme
changes no fingerprint, so it is not part of any pipeline id.

At a large ``k`` (pHash's 10) no scheme within about 20 tables has keys long enough: 11
blocks of 5-6 bits make candidates grow as n^2/64 per table. :class:`SampledScheme` is the
bounded alternative: ``tables`` tables, each keyed on ``key_bits`` bit positions drawn once
(a fixed seed): fewer, longer keys, with no guarantee. A pair at distance d shares a
table's key with probability C(64 - d, b) / C(64, b) when the positions are uniform, so its
recall is measured, not promised (:meth:`SampledScheme.model_recall`, and the bench against
exhaustive comparison).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_TABLES",
    "MIN_KEY_BITS",
    "SAMPLED_KEY_BITS",
    "SampledScheme",
    "Scheme",
    "default_blocks",
    "image_scheme",
    "sampled_key_bits",
]

MAX_TABLES = 20  # the default scheme keys a document at most this many times
MIN_KEY_BITS = 30  # ... and, within that, aims at keys of at least this many bits
LIMIT_TABLES = 1000  # a scheme a user asks for: more tables than this is refused
SAMPLED_KEY_BITS = 12  # the shortest default key of a sampled scheme (see sampled_key_bits)
SAMPLE_SEED = 0x6E656172647570  # the positions of every sampled scheme ("neardup")


def default_blocks(k: int) -> int:
    """The default number of blocks for distance ``k`` (0..63): the fewest blocks whose
    every table key has at least :data:`MIN_KEY_BITS` bits, unless that needs more than
    :data:`MAX_TABLES` tables; then the most blocks within :data:`MAX_TABLES` tables.

    Example:
        >>> [default_blocks(k) for k in (0, 1, 2, 3, 4, 10)]
        [1, 2, 4, 6, 6, 11]
    """
    best = k + 1
    for blocks in range(k + 1, 65):
        scheme = Scheme(blocks, k)
        if scheme.tables > MAX_TABLES:
            break
        best = blocks
        if scheme.key_bits[0] >= MIN_KEY_BITS:
            break
    return best


@dataclass(frozen=True)
class Scheme:
    """``blocks`` blocks, a table on every choice of ``blocks - k`` of them."""

    blocks: int
    k: int

    def __post_init__(self) -> None:
        if not 0 <= self.k <= 63:
            raise ValueError(f"k must be in [0, 63], got {self.k}")
        if not self.k + 1 <= self.blocks <= 64:
            raise ValueError(
                f"hamming_blocks must be in [k + 1, 64] = [{self.k + 1}, 64], got {self.blocks}"
            )
        if self.tables > LIMIT_TABLES:
            raise ValueError(
                f"hamming_blocks = {self.blocks} at k = {self.k} makes {self.tables} tables "
                f"(at most {LIMIT_TABLES}): choose fewer blocks"
            )

    @property
    def tables(self) -> int:
        """How many tables (key rows per fingerprint)."""
        return math.comb(self.blocks, self.blocks - self.k)

    @cached_property
    def bounds(self) -> list[int]:
        """Bit boundaries of the blocks, ``floor(i * 64 / blocks)``."""
        return [i * 64 // self.blocks for i in range(self.blocks + 1)]

    @cached_property
    def choices(self) -> list[tuple[int, ...]]:
        """The blocks of each table, in lexicographic order (table ``t`` = ``choices[t]``)."""
        return list(itertools.combinations(range(self.blocks), self.blocks - self.k))

    @cached_property
    def parts(self) -> list[list[tuple[int, int, int]]]:
        """Per table, per chosen block: ``(shift, width, offset)``: the table key is the OR
        of ``((fp >> shift) & (2**width - 1)) << offset`` (the blocks packed low first)."""
        b = self.bounds
        return [_packed([(b[i], b[i + 1] - b[i]) for i in choice]) for choice in self.choices]

    @property
    def key_bits(self) -> tuple[int, int]:
        """The shortest and the longest table key, in bits."""
        widths = [sum(w for _, w, _ in table) for table in self.parts]
        return min(widths), max(widths)

    @property
    def is_ditto(self) -> bool:
        """ditto's ``k + 1`` single-block tables."""
        return self.blocks == self.k + 1

    def describe(self) -> dict[str, object]:
        """What a report says of the scheme."""
        lo, hi = self.key_bits
        return {
            "blocks": self.blocks,
            "tables": self.tables,
            "key_bits": [lo, hi],
            "scheme": "ditto k+1 blocks" if self.is_ditto else "multi-table",
            "guaranteed": True,
        }

    def keys(self, fps: npt.ArrayLike) -> npt.NDArray[np.uint64]:
        """The table keys of every fingerprint: shape ``(len(fps), tables)``; two
        fingerprints within ``k`` bits share the key of at least one table."""
        return _keys(self.parts, fps)


def _packed(segments: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """A table's ``(shift, width)`` bit segments as ``(shift, width, offset)``: the key
    holds them side by side, the first lowest."""
    out, offset = [], 0
    for shift, width in segments:
        out.append((shift, width, offset))
        offset += width
    return out


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """Sorted bit positions as maximal runs of adjacent bits: ``(first, width)``."""
    runs: list[tuple[int, int]] = []
    for p in sorted(positions):
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


def _splitmix64(state: int) -> tuple[int, int]:
    """One step of SplitMix64: (next state, output); plain integers, so the positions it
    draws never depend on a library's random stream."""
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


@dataclass(frozen=True)
class SampledScheme:
    """``tables`` tables, each keyed on ``key_bits`` bit positions of the fingerprint: table
    ``t`` takes the first ``key_bits`` positions of a Fisher-Yates shuffle of 0..63 drawn
    with SplitMix64 from :data:`SAMPLE_SEED` + ``t`` (fixed for ever: an index or a rerun
    keys the same bits). No pair is guaranteed: a pair collides in a table exactly when
    it agrees on that table's bits."""

    tables: int
    key_bits: int
    k: int

    def __post_init__(self) -> None:
        if not 0 <= self.k <= 63:
            raise ValueError(f"k must be in [0, 63], got {self.k}")
        if not 1 <= self.tables <= LIMIT_TABLES:
            raise ValueError(f"hamming_tables must be in [1, {LIMIT_TABLES}], got {self.tables}")
        if not 1 <= self.key_bits <= 64 - self.k:
            raise ValueError(
                f"hamming_key_bits must be in [1, 64 - k] = [1, {64 - self.k}] (longer keys "
                f"never match a pair at distance k), got {self.key_bits}"
            )

    @cached_property
    def positions(self) -> list[list[int]]:
        """Each table's bit positions (0 = least significant), sorted."""
        out = []
        for t in range(self.tables):
            state, order = (SAMPLE_SEED + t) & 0xFFFFFFFFFFFFFFFF, list(range(64))
            for i in range(63, 0, -1):
                state, r = _splitmix64(state)
                j = r % (i + 1)
                order[i], order[j] = order[j], order[i]
            out.append(sorted(order[: self.key_bits]))
        return out

    @cached_property
    def parts(self) -> list[list[tuple[int, int, int]]]:
        """As :attr:`Scheme.parts`: per table, ``(shift, width, offset)`` of each run of
        adjacent chosen bits, packed low first."""
        return [_packed(_runs(positions)) for positions in self.positions]

    def model_recall(self, d: int) -> float:
        """The chance that a pair at distance ``d`` shares at least one table's key, were
        the differing bits uniform over the 64 (pHash's are not: the bench measures)."""
        one = math.comb(64 - d, self.key_bits) / math.comb(64, self.key_bits)
        return 1.0 - (1.0 - one) ** self.tables

    def describe(self) -> dict[str, object]:
        """What a report says of the scheme."""
        return {
            "tables": self.tables,
            "key_bits": [self.key_bits, self.key_bits],
            "scheme": "sampled bits",
            "guaranteed": False,
            "model_recall_at_k": round(self.model_recall(self.k), 4),
        }

    def keys(self, fps: npt.ArrayLike) -> npt.NDArray[np.uint64]:
        """The table keys of every fingerprint: shape ``(len(fps), tables)``."""
        return _keys(self.parts, fps)


def sampled_key_bits(images: int | None, k: int) -> int:
    """The default key length of a sampled scheme for ``images`` fingerprints: the fewest
    bits, at least :data:`SAMPLED_KEY_BITS`, that keep the chance candidates of uniform
    fingerprints (``images^2 / 2 x tables / 2^bits``) at most one per image, so they grow
    linearly with the collection; at most ``64 - k``. None (not known): the minimum.

    Example:
        >>> [sampled_key_bits(n, 10) for n in (None, 40, 5_000, 50_000, 10**9)]
        [12, 12, 16, 19, 34]
    """
    bits = SAMPLED_KEY_BITS
    if images is not None and images > 1:
        bits = max(bits, math.ceil(math.log2(images * MAX_TABLES / 2)))
    return min(bits, 64 - k)


def image_scheme(
    k: int, blocks: int | None = None, key_bits: int | None = None, images: int | None = None
) -> Scheme | SampledScheme:
    """The candidate keys of an image run at distance ``k`` over ``images`` fingerprints:
    ``blocks`` blocks (a guaranteed :class:`Scheme`) or :data:`MAX_TABLES` tables of
    ``key_bits`` sampled bits when one is given (not both); else the guaranteed default
    (:func:`default_blocks`) when its every key has at least :data:`SAMPLED_KEY_BITS` bits
    within :data:`MAX_TABLES` tables (k <= 4: no pair missed, whatever the collection),
    otherwise :data:`MAX_TABLES` tables of :func:`sampled_key_bits` sampled bits.

    Example:
        >>> image_scheme(3).describe()["scheme"], image_scheme(10).describe()["scheme"]
        ('multi-table', 'sampled bits')
    """
    if blocks is not None and key_bits is not None:
        raise ValueError("hamming_blocks and hamming_key_bits exclude each other: set one")
    if blocks is not None:
        return Scheme(blocks, k)
    if key_bits is None:
        guaranteed = Scheme(default_blocks(k), k)
        shortest = min(SAMPLED_KEY_BITS, 64 - k)
        if guaranteed.key_bits[0] >= shortest and guaranteed.tables <= MAX_TABLES:
            return guaranteed
        key_bits = sampled_key_bits(images, k)
    return SampledScheme(MAX_TABLES, key_bits, k)


def _keys(parts: list[list[tuple[int, int, int]]], fps: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    fps = np.asarray(fps, dtype=np.uint64)
    out = np.zeros((len(fps), len(parts)), dtype=np.uint64)
    for t, table in enumerate(parts):
        for shift, width, offset in table:
            mask = np.uint64((1 << width) - 1)
            out[:, t] |= ((fps >> np.uint64(shift)) & mask) << np.uint64(offset)
    return out
