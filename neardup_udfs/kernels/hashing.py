"""Hash primitives: FNV-1a 64 (one string, or many byte spans at once) and semblance's
SplitMix64 / Mix64 / Mix fold."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "FNV64_OFFSET",
    "FNV64_PRIME",
    "MIX_INIT",
    "SplitMix64",
    "fnv1a64",
    "fnv1a64_spans",
    "mix",
    "mix64",
    "mix64_array",
    "mix_fold",
]

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64 of ``data`` (Go ``hash/fnv.New64a``), as an unsigned int.

    Example:
        >>> f"{fnv1a64(b'a'):016x}"
        'af63dc4c8601ec8c'
    """
    h = FNV64_OFFSET
    for c in data:
        h = ((h ^ c) * FNV64_PRIME) & _MASK64
    return h


def fnv1a64_spans(buf: npt.NDArray[np.uint8], starts: I64, lengths: I64) -> U64:
    """FNV-1a 64 of every span ``buf[starts[i] : starts[i] + lengths[i]]``.

    Notes:
        Equals ``fnv1a64`` span by span (an empty span hashes to the offset basis). The work
        is one numpy pass per byte position over the spans still that long, so the cost is
        proportional to the total span length, whatever the mix of lengths.
    """
    n = len(starts)
    out = np.full(n, FNV64_OFFSET, dtype=np.uint64)
    if n == 0:
        return out
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    longest = int(lengths.max())
    if longest == 0:
        return out
    if int(lengths.min()) == longest:
        order = None
        st, h = starts, out
        counts = np.full(longest, n, dtype=np.int64)
    else:
        # Longest first, so the spans still active at byte j are a prefix.
        key = np.minimum(lengths, 0xFFFF).astype(np.uint16)
        order = np.argsort(~key, kind="stable")
        big = order[: int(np.count_nonzero(key == 0xFFFF))]
        if len(big) > 1:
            order[: len(big)] = big[np.argsort(-lengths[big], kind="stable")]
        st = starts[order]
        srt = lengths[order]
        h = np.full(n, FNV64_OFFSET, dtype=np.uint64)
        # counts[j] = number of spans longer than j.
        counts = np.searchsorted(-srt, -np.arange(longest), side="left").astype(np.int64)
    prime = np.uint64(FNV64_PRIME)
    for j in range(longest):
        c = int(counts[j])
        seg = h[:c]
        seg ^= buf[st[:c] + j]
        seg *= prime
    if order is not None:
        out[order] = h
    return out


# --- semblance's mixing primitives (internal/hashutil) ---------------------------------------

SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
_SPLITMIX_M1 = 0xBF58476D1CE4E5B9
_SPLITMIX_M2 = 0x94D049BB133111EB
MIX_INIT = 0xC2B2AE3D27D4EB4F
"""Starting accumulator of the Mix fold (semblance ``hashutil.MixInit``)."""


class SplitMix64:
    """SplitMix64 generator (Steele, Lea and Flood 2014), as semblance seeds everything.

    Example:
        >>> f"{SplitMix64(0).next():016x}"
        'e220a8397b1dcdaf'
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = int(seed) & _MASK64

    def next(self) -> int:
        """The next 64-bit output (advances the state by the golden-ratio gamma)."""
        self.state = (self.state + SPLITMIX_GAMMA) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * _SPLITMIX_M1) & _MASK64
        z = ((z ^ (z >> 27)) * _SPLITMIX_M2) & _MASK64
        return z ^ (z >> 31)


def mix64(x: int) -> int:
    """semblance ``Mix64(x)``: the first output of a SplitMix64 seeded with ``x``."""
    return SplitMix64(x).next()


def mix64_array(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """:func:`mix64` of every element of a uint64 array (numpy multiplies wrap mod 2**64)."""
    z = x + np.uint64(SPLITMIX_GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_SPLITMIX_M1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_SPLITMIX_M2)
    return z ^ (z >> np.uint64(31))


def mix(acc: int, h: int) -> int:
    """One step of semblance's order-sensitive fold: ``(rotl(acc, 31) ^ h) * gamma``."""
    acc &= _MASK64
    rot = ((acc << 31) | (acc >> 33)) & _MASK64
    return ((rot ^ (h & _MASK64)) * SPLITMIX_GAMMA) & _MASK64


def mix_fold(hashes: Iterable[int], acc: int = MIX_INIT) -> int:
    """Fold a sequence of 64-bit values from ``MIX_INIT`` (word shingles, LSH band keys).

    Example:
        >>> f"{mix_fold([0xDEADBEEF]):016x}"
        'a9a29eb60f11ecc5'
    """
    for h in hashes:
        acc = mix(acc, int(h))
    return acc
