"""Compiled XXH64: of one byte range with any seed (the word tokenizer hashes each token with
it), and of every text of a packed batch (``utf8.pack_utf8``'s layout), each with one seed.

Equal to the ``xxhash`` package's ``xxh64_intdigest(data, seed)`` for every input and seed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from neardup_udfs.kernels.compiled import kernel

__all__ = ["PRIMES", "rotl", "xxh64", "xxh64_at", "xxh64_spans"]

_u = np.uint64
PRIMES = (
    0x9E3779B185EBCA87,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0x85EBCA77C2B2AE63,
    0x27D4EB2F165667C5,
)
"""XXH64's five primes."""
_P1, _P2, _P3, _P4, _P5 = (_u(p) for p in PRIMES)


@njit(inline="always")
def rotl(x: np.uint64, r: int) -> np.uint64:
    """``x`` rotated left by ``r`` bits (0 < r < 64)."""
    return (x << _u(r)) | (x >> _u(64 - r))


@njit(inline="always")
def _read64(b: npt.NDArray[np.uint8], p: int) -> np.uint64:
    v = _u(0)
    for i in range(8):
        v |= _u(b[p + i]) << _u(8 * i)
    return v


@njit(inline="always")
def _round(acc: np.uint64, lane: np.uint64) -> np.uint64:
    return rotl(acc + lane * _P2, 31) * _P1


@kernel()
def xxh64_at(b: npt.NDArray[np.uint8], start: int, n: int, seed: np.uint64) -> np.uint64:
    """XXH64 with ``seed`` of ``b[start:start + n]``."""
    p, end = start, start + n
    if n >= 32:
        v1 = seed + _P1 + _P2
        v2 = seed + _P2
        v3 = seed
        v4 = seed - _P1
        while p + 32 <= end:
            v1 = _round(v1, _read64(b, p))
            v2 = _round(v2, _read64(b, p + 8))
            v3 = _round(v3, _read64(b, p + 16))
            v4 = _round(v4, _read64(b, p + 24))
            p += 32
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
        for v in (v1, v2, v3, v4):
            h = (h ^ _round(_u(0), v)) * _P1 + _P4
    else:
        h = seed + _P5
    h += _u(n)
    while p + 8 <= end:
        h ^= _round(_u(0), _read64(b, p))
        h = rotl(h, 27) * _P1 + _P4
        p += 8
    if p + 4 <= end:
        k = _u(b[p]) | (_u(b[p + 1]) << _u(8)) | (_u(b[p + 2]) << _u(16)) | (_u(b[p + 3]) << _u(24))
        h ^= k * _P1
        h = rotl(h, 23) * _P2 + _P3
        p += 4
    while p < end:
        h ^= _u(b[p]) * _P5
        h = rotl(h, 11) * _P1
        p += 1
    h = (h ^ (h >> _u(33))) * _P2  # the avalanche
    h = (h ^ (h >> _u(29))) * _P3
    return h ^ (h >> _u(32))


@kernel()
def _spans(
    buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], seed: np.uint64
) -> npt.NDArray[np.uint64]:
    out = np.empty(len(offsets) - 1, dtype=np.uint64)
    for d in range(len(out)):
        out[d] = xxh64_at(buf, offsets[d], offsets[d + 1] - offsets[d], seed)
    return out


def xxh64_spans(
    buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], seed: int = 0
) -> npt.NDArray[np.uint64]:
    """XXH64 with ``seed`` (an unsigned 64-bit value) of each text
    ``buf[offsets[d]:offsets[d + 1]]``."""
    return _spans(buf, offsets.astype(np.int64, copy=False), _u(seed))


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 with ``seed`` of ``data`` through the compiled kernel (equals the xxhash package)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return int(xxh64_at(arr, 0, len(arr), _u(seed)))
