"""semblance ``lsh.HammingIndex``: exact SimHash search within max_dist <= 3 bits.

Blocks are laid out from bit 0 with the extra bits first (22, 21, 21 for max_dist 2; ditto's
layout in ``hamming_index`` puts them last). Query order: block, then insertion order.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator

from neardup_udfs.kernels.checks import as_fingerprint
from neardup_udfs.kernels.lsh_index import Stats
from neardup_udfs.kernels.readonly import ReadOnly
from neardup_udfs.kernels.simhash import distance

__all__ = ["HammingIndex"]


# --- HammingIndex --------------------------------------------------------------------------------


class HammingIndex:
    """semblance ``lsh.HammingIndex``: exact SimHash search within ``max_dist`` bits.

    The 64 bits are cut into ``max_dist + 1`` blocks (Manku, Jain and Das Sarma 2007); two
    fingerprints within ``max_dist`` bits agree on at least one block, so one exact-match table
    per block finds every match, and each hit is verified by its distance.

    Notes:
        ``max_dist`` must be 1, 2 or 3 (ValueError otherwise). Block ``i`` has width
        ``64 // n + (1 if i < 64 % n else 0)``, laid out from bit 0 up — for ``max_dist = 2``
        the widths are 22, 21, 21 (ditto's layout is 21, 21, 22). ``query`` order: first
        matching block, then insertion order; no false positives or negatives. Ids may
        repeat; ``remove`` drops every entry of all their adds.

    Example:
        >>> hx = HammingIndex(1)
        >>> hx.add("a", 0b1011); hx.add("b", 0b1000); hx.add("c", 0b0100)
        >>> hx.query(0b1010)
        ['a', 'b']
    """

    def __init__(self, max_dist: int) -> None:
        d = operator.index(max_dist)
        if not 1 <= d <= 3:
            raise ValueError(f"max_dist must be in [1, 3], got {d}")
        self._max_dist = d
        n = d + 1
        layout: list[tuple[int, int]] = []
        shift = 0
        for i in range(n):
            width = 64 // n + (1 if i < 64 % n else 0)
            layout.append((shift, width))
            shift += width
        self._layout = tuple(layout)
        self._masks = tuple((1 << w) - 1 for _, w in layout)
        self._tables: list[dict[int, list[tuple[int, str]]]] = [{} for _ in range(n)]
        self._fps: dict[str, list[int]] = {}

    max_dist = ReadOnly[int]("_max_dist", "The distance bound queries answer at.")
    blocks = ReadOnly[tuple[tuple[int, int], ...]](
        "_layout", "``(shift, width)`` of every block, from bit 0 upward."
    )

    def _keys(self, fp: int) -> list[int]:
        return [(fp >> s) & m for (s, _), m in zip(self._layout, self._masks, strict=True)]

    def add(self, id: str, fp: int) -> None:
        """Index ``id`` under the fingerprint ``fp`` (an int in ``[0, 2**64)``)."""
        v = as_fingerprint(fp)
        for table, key in zip(self._tables, self._keys(v), strict=True):
            bucket = table.get(key)
            if bucket is None:
                table[key] = [(v, id)]
            else:
                bucket.append((v, id))
        self._fps.setdefault(id, []).append(v)

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id``; report whether it was present."""
        fps = self._fps.pop(id, None)
        if fps is None:
            return False
        for v in fps:
            for table, key in zip(self._tables, self._keys(v), strict=True):
                bucket = table.get(key)
                if bucket is None:
                    continue
                kept = [e for e in bucket if e[1] != id]
                if kept:
                    table[key] = kept
                else:
                    del table[key]
        return True

    def query(self, fp: int) -> list[str]:
        """Ids of fingerprints within ``max_dist`` bits of ``fp``: block, then insertion order."""
        v = as_fingerprint(fp)
        out: list[str] = []
        seen: set[str] = set()
        limit = self._max_dist
        for table, key in zip(self._tables, self._keys(v), strict=True):
            for stored, id in table.get(key, ()):
                if id not in seen and distance(stored, v) <= limit:
                    seen.add(id)
                    out.append(id)
        return out

    def __len__(self) -> int:
        return len(self._fps)

    def __contains__(self, id: object) -> bool:
        return id in self._fps

    def items(self) -> Iterator[tuple[str, int]]:
        """``(id, fingerprint)`` once per add (semblance ``Range``; order unspecified)."""
        return iter([(id, v) for id, fps in self._fps.items() for v in fps])

    def stats(self) -> Stats:
        """Block-table occupancy (a full walk of the tables)."""
        return Stats.of(len(self._fps), self._tables)
