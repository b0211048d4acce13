"""The pieces every compiled SimHash kernel shares: FNV-1a 64 of a byte span (the feature hash
of ditto and fingerprint) and Charikar's vote, one counter per bit with weight 1 per feature.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from neardup_udfs.kernels.hashing import FNV64_OFFSET, FNV64_PRIME

__all__ = ["FNV_OFFSET", "add_votes", "fnv1a_span", "majority_bits"]

FNV_OFFSET = np.uint64(FNV64_OFFSET)
"""FNV-1a 64's initial value, as the uint64 :func:`fnv1a_span` starts from."""
_PRIME = np.uint64(FNV64_PRIME)
_ONE = np.uint64(1)


@njit(inline="always")
def fnv1a_span(h: np.uint64, b: npt.NDArray[np.uint8], lo: int, hi: int) -> np.uint64:
    """FNV-1a 64 continued from state ``h`` over the bytes ``b[lo:hi]``
    (``fnv1a_span(FNV_OFFSET, ...)`` is the hash of the span)."""
    for q in range(lo, hi):
        h = (h ^ np.uint64(b[q])) * _PRIME
    return h


@njit(inline="always")
def add_votes(counts: npt.NDArray[np.int64], h: np.uint64) -> None:
    """Count one feature hash: ``counts[i] += bit i of h`` for the 64 bits."""
    for i in range(64):
        counts[i] += np.int64((h >> np.uint64(i)) & _ONE)


@njit(inline="always")
def majority_bits(counts: npt.NDArray[np.int64], m: int) -> np.uint64:
    """The SimHash of ``m`` counted features: bit i set iff more than half had it set
    (a tie gives 0)."""
    fp = np.uint64(0)
    for i in range(64):
        if 2 * counts[i] > m:
            fp |= _ONE << np.uint64(i)
    return fp
