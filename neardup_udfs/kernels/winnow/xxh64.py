"""XXH64 (seed 0) of every k-byte window of a byte array at once, as semblance's
``shingle.Char`` hashes k-grams: numpy, one pass per 4/8-byte lane, bit-identical to
``xxhash.xxh64_intdigest`` of each window.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.winnow.inputs import MASK64

__all__ = ["xxh64_windows"]

U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]

_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_u = np.uint64


def _rotl(x: U64, r: int) -> U64:
    """Rotate every element of ``x`` left by ``r`` bits, in place; returns ``x``."""
    hi = x >> _u(64 - r)
    x <<= _u(r)
    x |= hi
    return x


def _round(acc: U64, lane: U64) -> U64:
    """XXH64 round ``rotl(acc + lane * P2, 31) * P1``, in place on ``acc``."""
    acc += lane * _u(_P2)
    _rotl(acc, 31)
    acc *= _u(_P1)
    return acc


def _words(seg: U8, width: int, count: int) -> U64:
    """Little-endian ``width``-byte words (4 or 8) at byte offsets 0..count-1 of ``seg``."""
    dt = np.dtype("<u8") if width == 8 else np.dtype("<u4")
    out = np.empty(count, dtype=np.uint64)
    for r in range(width):
        n = (count - r + width - 1) // width
        if n > 0:
            out[r::width] = seg[r : r + n * width].view(dt)
    return out


def xxh64_windows(seg: U8, k: int) -> U64:
    """XXH64 (seed 0) of ``seg[i : i + k]`` for every i in 0..len(seg)-k (len(seg) >= k)."""
    count = len(seg) - k + 1
    w8 = _words(seg, 8, len(seg) - 7) if k >= 8 else None
    p = 0
    if k >= 32:
        assert w8 is not None
        v1 = np.full(count, (_P1 + _P2) & MASK64, dtype=np.uint64)
        v2 = np.full(count, _P2, dtype=np.uint64)
        v3 = np.zeros(count, dtype=np.uint64)
        v4 = np.full(count, (-_P1) & MASK64, dtype=np.uint64)
        while p + 32 <= k:
            _round(v1, w8[p : p + count])
            _round(v2, w8[p + 8 : p + 8 + count])
            _round(v3, w8[p + 16 : p + 16 + count])
            _round(v4, w8[p + 24 : p + 24 + count])
            p += 32
        h = _rotl(v1.copy(), 1) + _rotl(v2.copy(), 7) + _rotl(v3.copy(), 12)
        h += _rotl(v4.copy(), 18)
        for v in (v1, v2, v3, v4):
            h ^= _round(np.zeros(count, dtype=np.uint64), v)
            h *= _u(_P1)
            h += _u(_P4)
    else:
        h = np.full(count, _P5, dtype=np.uint64)
    h += _u(k)
    while p + 8 <= k:
        assert w8 is not None
        h ^= _round(np.zeros(count, dtype=np.uint64), w8[p : p + count])
        _rotl(h, 27)
        h *= _u(_P1)
        h += _u(_P4)
        p += 8
    if p + 4 <= k:
        w4 = _words(seg[p:], 4, count)
        h ^= w4 * _u(_P1)
        _rotl(h, 23)
        h *= _u(_P2)
        h += _u(_P3)
        p += 4
    while p < k:
        h ^= seg[p : p + count].astype(np.uint64) * _u(_P5)
        _rotl(h, 11)
        h *= _u(_P1)
        p += 1
    h ^= h >> _u(33)
    h *= _u(_P2)
    h ^= h >> _u(29)
    h *= _u(_P3)
    h ^= h >> _u(32)
    return h
