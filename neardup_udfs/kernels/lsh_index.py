"""semblance ``lsh.Index`` (unverified candidates) and ``lsh.VerifiedIndex`` (Jaccard-checked).

Query order: first matching band, then insertion order; VerifiedIndex sorts by similarity
descending, then id ascending (byte-wise, as Go). Not safe for concurrent use.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.checks import as_signature, positive
from neardup_udfs.kernels.lsh import band_key_ints, band_keys_batch, threshold
from neardup_udfs.kernels.minhash import jaccard
from neardup_udfs.kernels.readonly import ReadOnly
from neardup_udfs.kernels.text import go_str_key

__all__ = ["Index", "Neighbor", "Stats", "VerifiedIndex"]

U64 = npt.NDArray[np.uint64]
R = TypeVar("R")


# --- shared bucket store -------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """Occupancy of an index (semblance ``lsh.Stats``).

    Attributes:
        ids: distinct ids indexed (same as ``len``).
        buckets: non-empty buckets over all bands (blocks).
        entries: total bucket entries (``bands`` per Add to an Index, ``max_dist + 1`` per Add
            to a HammingIndex).
        max_bucket: size of the largest bucket — the hot-bucket signal.
    """

    ids: int
    buckets: int
    entries: int
    max_bucket: int

    @classmethod
    def of(cls, ids: int, tables: Iterable[dict[Any, list[Any]]]) -> Stats:
        """The occupancy of bucket tables (one dict of key -> entries per band or block) that
        hold ``ids`` distinct ids (a full walk of the tables)."""
        buckets = entries = biggest = 0
        for table in tables:
            for bucket in table.values():
                buckets += 1
                entries += len(bucket)
                biggest = max(biggest, len(bucket))
        return cls(ids, buckets, entries, biggest)


class _Buckets:
    """Per band: key -> ids in insertion order (duplicates allowed)."""

    __slots__ = ("bands",)

    def __init__(self, n: int) -> None:
        self.bands: list[dict[int, list[str]]] = [{} for _ in range(n)]

    def add(self, band: int, key: int, id: str) -> None:
        table = self.bands[band]
        bucket = table.get(key)
        if bucket is None:
            table[key] = [id]
        else:
            bucket.append(id)

    def get(self, band: int, key: int) -> list[str]:
        return self.bands[band].get(key, [])

    def remove(self, band: int, key: int, id: str) -> None:
        """Drop every occurrence of ``id`` from one bucket; an emptied bucket disappears."""
        table = self.bands[band]
        bucket = table.get(key)
        if bucket is None:
            return
        kept = [v for v in bucket if v != id]
        if kept:
            table[key] = kept
        else:
            del table[key]

    def candidates(self, keys: Iterable[int]) -> list[str]:
        """Ids in the buckets of ``keys`` (band order, then insertion order), first sight only."""
        out: list[str] = []
        seen: set[str] = set()
        for band, key in enumerate(keys):
            for id in self.bands[band].get(key, ()):
                if id not in seen:
                    seen.add(id)
                    out.append(id)
        return out


# --- Index ---------------------------------------------------------------------------------------


class _Banded(Generic[R]):
    """The banding shape shared by :class:`Index` and :class:`VerifiedIndex`: the buckets,
    and per indexed id what the index keeps of it (``R``)."""

    def __init__(self, bands: int, rows: int) -> None:
        self._bands = positive("bands", bands)
        self._rows = positive("rows", rows)
        self._store = _Buckets(self._bands)
        self._by_id: dict[str, R] = {}

    bands = ReadOnly[int]("_bands", "Number of bands.")
    rows = ReadOnly[int]("_rows", "Rows (signature values) per band.")

    def threshold(self) -> float:
        """``(1/bands) ** (1/rows)`` as Go computes it (see the module function)."""
        return threshold(self._bands, self._rows)

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, id: object) -> bool:
        return id in self._by_id

    def ids(self) -> Iterator[str]:
        """The distinct indexed ids (semblance ``Range``; order unspecified — here first-add
        order)."""
        return iter(list(self._by_id))

    def stats(self) -> Stats:
        """Bucket occupancy (a full walk of the buckets)."""
        return Stats.of(len(self._by_id), self._store.bands)


class Index(_Banded[list[int]]):
    """semblance ``lsh.Index``: MinHash banding index returning unverified candidates.

    A signature of ``bands * rows`` values becomes a candidate of a query when the two agree
    on every row of at least one band. For Jaccard ``J`` that happens with probability
    ``1 - (1 - J**rows)**bands``.

    Notes:
        Ids need not be unique: each ``add`` indexes again, a query still returns the id
        once, and ``remove`` drops the entries of all its adds. ``query`` returns ids in the
        order: first matching band, then insertion order within the bucket; false positives
        are expected (verify with ``minhash.jaccard``), near-threshold pairs can be missed.
        The index keeps no signatures, only, per id, the keys of every add (``bands`` ints
        per add) for ``remove``.

    Example:
        >>> ix = Index(2, 2)
        >>> ix.add("a", [1, 2, 3, 4]); ix.add("b", [9, 9, 3, 4]); ix.add("c", [5, 6, 7, 8])
        >>> ix.query([1, 2, 3, 4])
        ['a', 'b']
    """

    def _keys_of(self, sig: npt.ArrayLike) -> list[int]:
        arr = as_signature(sig, self._bands * self._rows, "bands*rows")
        return band_key_ints(arr.tolist(), self._bands, self._rows)

    def _add_keys(self, id: str, keys: list[int]) -> None:
        for band, key in enumerate(keys):
            self._store.add(band, key, id)
        self._by_id.setdefault(id, []).extend(keys)

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Index ``id`` under ``sig`` (ValueError if ``len(sig) != bands * rows``)."""
        self._add_keys(id, self._keys_of(sig))

    def add_many(self, ids: Sequence[str], sigs: npt.ArrayLike) -> None:
        """``add`` every ``(ids[i], sigs[i])`` in order, band keys computed in one batch.

        Notes:
            Same result as the sequential adds. ValueError (before any change) when the
            lengths differ or ``sigs`` is not ``(len(ids), bands * rows)``.
        """
        keys = band_keys_batch(sigs, self._bands, self._rows)
        if keys.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids but {keys.shape[0]} signatures")
        for id, row in zip(ids, keys.tolist(), strict=True):
            self._add_keys(id, row)

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id`` (from all its adds); report whether it was present."""
        keys = self._by_id.pop(id, None)
        if keys is None:
            return False
        for i, key in enumerate(keys):
            self._store.remove(i % self._bands, key, id)
        return True

    def query(self, sig: npt.ArrayLike) -> list[str]:
        """Ids sharing at least one band key with ``sig``: band order, then insertion order.

        Notes:
            Deduplicated; empty list when there are none. Unverified candidates.
        """
        return self._store.candidates(self._keys_of(sig))


# --- VerifiedIndex -------------------------------------------------------------------------------


class Neighbor(NamedTuple):
    """A verified match of :meth:`VerifiedIndex.query`."""

    id: str
    similarity: float


class VerifiedIndex(_Banded[U64]):
    """semblance ``lsh.VerifiedIndex``: a banding index that keeps signatures and ranks matches.

    Notes:
        ``add`` stores a copy of the signature; adding an existing id replaces its signature
        and re-indexes it (no stale bucket entries). ``query(sig, min_jaccard)`` walks the
        same candidates as :class:`Index`, keeps those with ``jaccard(sig, stored) >=
        min_jaccard`` (``0`` keeps them all) and sorts them by similarity descending, then id
        ascending (byte-wise). The query's own id is not excluded. A ``min_jaccard`` below
        :meth:`threshold` silently misses pairs the banding never surfaces.

    Example:
        >>> vi = VerifiedIndex(2, 2)
        >>> vi.add("a", [1, 2, 3, 4]); vi.add("b", [1, 2, 0, 0])
        >>> vi.query([1, 2, 3, 4], 0.5)
        [Neighbor(id='a', similarity=1.0), Neighbor(id='b', similarity=0.5)]
    """

    def _sig(self, sig: npt.ArrayLike) -> U64:
        return as_signature(sig, self._bands * self._rows, "bands*rows")

    def _keys_of(self, arr: U64) -> list[int]:
        return band_key_ints(arr.tolist(), self._bands, self._rows)

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Store a copy of ``sig`` under ``id``, replacing and re-indexing a previous one."""
        arr = self._sig(sig)
        keys = self._keys_of(arr)
        prev = self._by_id.get(id)
        if prev is not None:
            self._drop(id, prev)
        for band, key in enumerate(keys):
            self._store.add(band, key, id)
        self._by_id[id] = arr.copy()

    def _drop(self, id: str, sig: U64) -> None:
        for band, key in enumerate(self._keys_of(sig)):
            self._store.remove(band, key, id)

    def remove(self, id: str) -> bool:
        """Delete ``id``; report whether it was present."""
        sig = self._by_id.pop(id, None)
        if sig is None:
            return False
        self._drop(id, sig)
        return True

    def query(self, sig: npt.ArrayLike, min_jaccard: float = 0.0) -> list[Neighbor]:
        """Indexed ids whose estimated Jaccard with ``sig`` is ``>= min_jaccard``, ranked.

        Notes:
            Order: similarity descending, then id ascending by UTF-8 bytes (Go string order).
            Empty list when nothing qualifies.
        """
        arr = self._sig(sig)
        out: list[Neighbor] = []
        for id in self._store.candidates(self._keys_of(arr)):
            sim = jaccard(arr, self._by_id[id])
            if sim >= min_jaccard:
                out.append(Neighbor(id, sim))
        out.sort(key=lambda n: (-n.similarity, go_str_key(n.id)))
        return out

    def signature(self, id: str) -> U64 | None:
        """A copy of the stored signature of ``id``, or None when it is not indexed."""
        sig = self._by_id.get(id)
        return None if sig is None else sig.copy()
