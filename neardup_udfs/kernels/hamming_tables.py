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
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_TABLES", "MIN_KEY_BITS", "Scheme", "default_blocks"]

MAX_TABLES = 20  # the default scheme keys a document at most this many times
MIN_KEY_BITS = 30  # ... and, within that, aims at keys of at least this many bits
LIMIT_TABLES = 1000  # a scheme a user asks for: more tables than this is refused


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
        out = []
        for choice in self.choices:
            offset, table = 0, []
            for i in choice:
                width = self.bounds[i + 1] - self.bounds[i]
                table.append((self.bounds[i], width, offset))
                offset += width
            out.append(table)
        return out

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
        }

    def keys(self, fps: npt.ArrayLike) -> npt.NDArray[np.uint64]:
        """The table keys of every fingerprint: shape ``(len(fps), tables)``; two
        fingerprints within ``k`` bits share the key of at least one table."""
        fps = np.asarray(fps, dtype=np.uint64)
        out = np.zeros((len(fps), self.tables), dtype=np.uint64)
        for t, table in enumerate(self.parts):
            for shift, width, offset in table:
                mask = np.uint64((1 << width) - 1)
                out[:, t] |= ((fps >> np.uint64(shift)) & mask) << np.uint64(offset)
        return out
