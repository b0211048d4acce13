"""64-bit FNV-1a, one string at a time and over many byte spans of one buffer at once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["FNV64_OFFSET", "FNV64_PRIME", "fnv1a64", "fnv1a64_spans"]

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
