"""UTF-8 for the compiled kernels: a batch of texts as one byte buffer, Go's rune decoding of
it, and the encoding of a rune back to bytes.

Decoding is Go's ``utf8.DecodeRune``: every byte that does not start a valid shortest-form
sequence of a scalar value is one U+FFFD of size 1 (``text.go_decode`` is the same rule for
Python strings).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from numba import njit

__all__ = ["decode_rune", "pack_utf8", "put_rune", "whole_characters"]


def pack_utf8(texts: Sequence[str | bytes]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """``(buf, offsets)``: text d's bytes are ``buf[offsets[d]:offsets[d + 1]]``, a ``str``
    as its UTF-8 (lone surrogates as their 3-byte form), ``bytes`` as they are."""
    raw = [t.encode("utf-8", "surrogatepass") if isinstance(t, str) else bytes(t) for t in texts]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    return np.frombuffer(b"".join(raw), dtype=np.uint8), offsets


def whole_characters(data: bytes, start: int, end: int) -> tuple[int, int]:
    """``(start', end')``, the byte range ``[start, end)`` of ``data`` widened to whole UTF-8
    characters: ``start'`` is the lead byte of the character holding ``start`` and ``end'``
    the end of the character holding byte ``end - 1`` (each moved over at most 3
    continuation bytes, so invalid bytes widen no further); ``start' <= start``,
    ``end' >= end``, both within ``data``."""
    start, end = max(0, min(start, len(data))), max(0, min(end, len(data)))
    for _ in range(3):
        if start == 0 or start >= len(data) or data[start] & 0xC0 != 0x80:
            break
        start -= 1
    for _ in range(3):
        if end >= len(data) or data[end] & 0xC0 != 0x80:
            break
        end += 1
    return start, end


@njit(inline="always")
def decode_rune(b: npt.NDArray[np.uint8], p: int, end: int) -> tuple[int, int]:
    """Go's ``utf8.DecodeRune`` of ``b[p:end]`` (p < end): ``(rune, size)``, ``(0xFFFD, 1)``
    for a byte that starts no valid sequence."""
    c = b[p]
    if c < 0x80:
        return c, 1
    if 0xC2 <= c <= 0xDF:
        need, lo, hi, r = 1, 0x80, 0xBF, c & 0x1F
    elif c == 0xE0:
        need, lo, hi, r = 2, 0xA0, 0xBF, c & 0x0F
    elif (0xE1 <= c <= 0xEC) or c == 0xEE or c == 0xEF:
        need, lo, hi, r = 2, 0x80, 0xBF, c & 0x0F
    elif c == 0xED:
        need, lo, hi, r = 2, 0x80, 0x9F, c & 0x0F
    elif c == 0xF0:
        need, lo, hi, r = 3, 0x90, 0xBF, c & 0x07
    elif 0xF1 <= c <= 0xF3:
        need, lo, hi, r = 3, 0x80, 0xBF, c & 0x07
    elif c == 0xF4:
        need, lo, hi, r = 3, 0x80, 0x8F, c & 0x07
    else:
        return 0xFFFD, 1
    if p + need >= end:  # a continuation byte is missing
        return 0xFFFD, 1
    if not (lo <= b[p + 1] <= hi):
        return 0xFFFD, 1
    r = (r << 6) | (b[p + 1] & 0x3F)
    for i in range(2, need + 1):
        if not (0x80 <= b[p + i] <= 0xBF):
            return 0xFFFD, 1
        r = (r << 6) | (b[p + i] & 0x3F)
    return r, need + 1


@njit(inline="always")
def put_rune(out: npt.NDArray[np.uint8], n: int, r: int) -> int:
    """Write rune ``r`` as UTF-8 at ``out[n:]`` (room for 4 bytes); returns the new end."""
    if r < 0x80:
        out[n] = r
        return n + 1
    if r < 0x800:
        out[n] = 0xC0 | (r >> 6)
        out[n + 1] = 0x80 | (r & 0x3F)
        return n + 2
    if r < 0x10000:
        out[n] = 0xE0 | (r >> 12)
        out[n + 1] = 0x80 | ((r >> 6) & 0x3F)
        out[n + 2] = 0x80 | (r & 0x3F)
        return n + 3
    out[n] = 0xF0 | (r >> 18)
    out[n + 1] = 0x80 | ((r >> 12) & 0x3F)
    out[n + 2] = 0x80 | ((r >> 6) & 0x3F)
    out[n + 3] = 0x80 | (r & 0x3F)
    return n + 4
