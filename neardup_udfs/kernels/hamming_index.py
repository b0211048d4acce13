"""ditto's banded ``Index``: exact Hamming-distance search over 64-bit SimHash fingerprints.

A fingerprint is cut into ``k + 1`` blocks; by the pigeonhole principle two fingerprints
within ``k`` bits agree exactly on at least one block, so looking up each block finds every
match (Manku, Jain and Das Sarma, "Detecting near-duplicates for web crawling", WWW 2007).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.simhash import distance
from neardup_udfs.kernels.unionfind import UnionFind

__all__ = ["Index", "Match", "block_bounds", "block_keys", "clamp_k"]

U64 = npt.NDArray[np.uint64]


def clamp_k(k: int) -> int:
    """ditto ``NewIndex`` clamps the build-time distance into [0, 63]."""
    return min(max(int(k), 0), 63)


def block_bounds(k: int) -> list[int]:
    """Bit boundaries of the ``k + 1`` blocks: ``floor(i * 64 / (k + 1))`` for i = 0..k+1.

    Notes:
        ``k`` is clamped to [0, 63]. Widths are floor splits with the extra bits last, e.g.
        ``k = 2`` -> ``[0, 21, 42, 64]``.

    Example:
        >>> block_bounds(3)
        [0, 16, 32, 48, 64]
    """
    blocks = clamp_k(k) + 1
    return [i * 64 // blocks for i in range(blocks + 1)]


def block_keys(fps: U64, k: int) -> U64:
    """Block values of every fingerprint: an array of shape ``(len(fps), k + 1)``.

    Notes:
        Block i of ``fp`` is ``(fp >> bounds[i]) & (2**width_i - 1)``, as ditto computes it.
    """
    fps = np.asarray(fps, dtype=np.uint64)
    bounds = block_bounds(k)
    out = np.empty((len(fps), len(bounds) - 1), dtype=np.uint64)
    for i in range(len(bounds) - 1):
        width = bounds[i + 1] - bounds[i]
        mask = np.uint64((1 << width) - 1)
        out[:, i] = (fps >> np.uint64(bounds[i])) & mask
    return out


@dataclass(frozen=True)
class Match:
    """One ``Index.near`` result: sorted by distance, then id."""

    distance: int
    id: str
    fingerprint: int


class Index:
    """ditto ``Index``: ids and fingerprints, bucketed by block value for exact k-bit search.

    Notes:
        Entries keep insertion order; ids need not be unique (each ``add`` is an entry).
        Queries never look further than the build-time ``k``.
    """

    def __init__(self, k: int) -> None:
        self._k = clamp_k(k)
        self._bounds = block_bounds(self._k)
        self._ids: list[str] = []
        self._fps: list[int] = []
        self._tables: list[defaultdict[int, list[int]]] = [
            defaultdict(list) for _ in range(len(self._bounds) - 1)
        ]

    @property
    def k(self) -> int:
        """The build-time distance (after clamping)."""
        return self._k

    def __len__(self) -> int:
        return len(self._ids)

    def _keys(self, fp: int) -> list[int]:
        b = self._bounds
        return [(fp >> b[i]) & ((1 << (b[i + 1] - b[i])) - 1) for i in range(len(b) - 1)]

    def add(self, id: str, fp: int) -> None:
        """Append an entry (an id may be added more than once)."""
        fp = int(fp) & 0xFFFFFFFFFFFFFFFF
        idx = len(self._ids)
        self._ids.append(id)
        self._fps.append(fp)
        for table, key in zip(self._tables, self._keys(fp), strict=True):
            table[key].append(idx)

    def _candidates(self, fp: int) -> list[int]:
        seen: set[int] = set()
        out: list[int] = []
        for table, key in zip(self._tables, self._keys(fp), strict=True):
            for j in table.get(key, ()):
                if j not in seen:
                    seen.add(j)
                    out.append(j)
        return out

    def _clamp_query(self, k: int) -> int:
        return min(int(k), self._k)

    def near(self, fp: int, k: int) -> list[Match]:
        """Every entry within ``k`` bits of ``fp``, by distance then id (byte-wise).

        Notes:
            ``k`` is clamped down to the build-time k, never raised; a negative ``k`` finds
            nothing. Exact: no false positives or negatives within the clamped k.
        """
        k = self._clamp_query(k)
        if k < 0:
            return []
        fp = int(fp) & 0xFFFFFFFFFFFFFFFF
        out = []
        for j in self._candidates(fp):
            d = distance(fp, self._fps[j])
            if d <= k:
                out.append(Match(d, self._ids[j], self._fps[j]))
        out.sort(key=lambda m: (m.distance, _id_key(m.id)))
        return out

    def clusters(self, k: int, min_size: int = 2) -> list[list[str]]:
        """Single-link near-duplicate families: entries within ``k`` bits are joined.

        Notes:
            ``k`` is clamped as in :meth:`near`. Families smaller than ``min_size`` are
            dropped (``min_size <= 1`` keeps singletons). Ids inside a family are sorted
            ascending; families by size descending, then by their sorted id lists.
        """
        k = self._clamp_query(k)
        n = len(self._ids)
        uf = UnionFind(n)
        if k >= 0:
            for idx in range(n):
                fp = self._fps[idx]
                for j in self._candidates(fp):
                    if j != idx and distance(fp, self._fps[j]) <= k:
                        uf.union(idx, j)
        groups: defaultdict[int, list[str]] = defaultdict(list)
        for idx in range(n):
            groups[uf.find(idx)].append(self._ids[idx])
        out = [sorted(g, key=_id_key) for g in groups.values() if len(g) >= min_size]
        out.sort(key=lambda g: (-len(g), [_id_key(i) for i in g]))
        return out


def _id_key(id: str) -> bytes:
    """Go compares strings byte-wise: order ids by their UTF-8 bytes."""
    return id.encode("utf-8", "surrogateescape")
