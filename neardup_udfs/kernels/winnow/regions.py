"""Byte ranges of one text: :class:`Region` (what ``Index.cover`` reports as boilerplate)
and :func:`remove_ranges`, which cuts ranges out of UTF-8 bytes on whole characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Region:
    """A byte range ``[pos, pos + length)`` of one text (``winnow.Region``, see ``Index.cover``)."""

    pos: int
    length: int


def remove_ranges(data: bytes, ranges: Iterable[tuple[int, int]]) -> tuple[bytes, int]:
    """``data`` without the byte ranges ``(start, length)``, and how many bytes went.

    Each range is clipped to ``data`` and widened to whole UTF-8 characters: a cut inside a
    multi-byte sequence takes the whole sequence (continuation bytes 0x80-0xBF next to a cut
    go with it), so valid UTF-8 stays valid. Overlapping ranges are removed once.

    Example:
        >>> remove_ranges(b"keep BOILER keep", [(4, 7)])
        (b'keep keep', 7)
    """
    n = len(data)
    cuts: list[tuple[int, int]] = []
    for start, length in sorted((int(s), int(ln)) for s, ln in ranges):
        lo, hi = max(0, start), min(n, start + max(0, length))
        if lo >= hi:
            continue
        while lo > 0 and data[lo] & 0xC0 == 0x80:
            lo -= 1
        while hi < n and data[hi] & 0xC0 == 0x80:
            hi += 1
        if cuts and lo <= cuts[-1][1]:
            cuts[-1] = (cuts[-1][0], max(cuts[-1][1], hi))
        else:
            cuts.append((lo, hi))
    kept: list[bytes] = []
    at = 0
    for lo, hi in cuts:
        kept.append(data[at:lo])
        at = hi
    kept.append(data[at:])
    return b"".join(kept), sum(hi - lo for lo, hi in cuts)
