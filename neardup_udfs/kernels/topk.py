"""semblance's ``topk``: the SpaceSaving frequent-items sketch, tie-breaks included."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

from neardup_udfs.kernels.readonly import ReadOnly

__all__ = ["SpaceSaving"]

T = TypeVar("T", bound=Hashable)


class _Counter(Generic[T]):
    __slots__ = ("item", "count", "err", "seq")

    def __init__(self, item: T, count: int, err: int, seq: int) -> None:
        self.item, self.count, self.err, self.seq = item, count, err, seq

    def key(self) -> tuple[int, int]:
        return self.count, self.seq


class SpaceSaving(Generic[T]):
    """SpaceSaving summary (Metwally et al. 2005) with ``capacity`` counters.

    Counters live in a binary min-heap keyed by ``(count, seq)`` (``seq`` = adoption order),
    kept exactly as semblance's heap array is, because ``merge`` walks that array.

    Notes:
        After ``n`` observations: every item whose true count exceeds ``n / capacity`` is
        tracked; a tracked item's true count lies in ``[count - err, count]`` and
        ``err <= n / capacity``. An untracked item reports ``(m, m)`` with ``m`` the smallest
        counter (0 while below capacity). The counters depend on stream order (inherent to
        SpaceSaving) but identical streams always give identical sketches. ``merge`` loosens
        ``err`` to about ``n1 / c1 + n2 / c2``. Counts are unbounded Python ints (Go's
        uint64 would wrap past 2**64 observations).

    Example:
        >>> s = SpaceSaving[str](2)
        >>> for w in "a a b c".split(): s.add(w)
        >>> s.top(2)
        [('a', 2, 0), ('c', 2, 1)]
    """

    __slots__ = ("_cap", "_heap", "_pos", "_n", "_seq")

    def __init__(self, capacity: int) -> None:
        if capacity <= 0:
            raise ValueError(f"topk: capacity must be positive, got {capacity}")
        self._cap = int(capacity)
        self._heap: list[_Counter[T]] = []
        self._pos: dict[T, int] = {}
        self._n = 0
        self._seq = 0

    capacity = ReadOnly[int]("_cap")
    n = ReadOnly[int]("_n", "Total number of observations (the sum of all ``add`` weights).")

    def __len__(self) -> int:
        """Number of items currently tracked (at most ``capacity``)."""
        return len(self._heap)

    def add(self, item: T, n: int = 1) -> None:
        """Observe ``n`` occurrences of ``item`` (``n = 0`` is a no-op; negative raises)."""
        if n < 0:
            raise ValueError(f"topk: weight must be non-negative, got {n}")
        if n == 0:
            return
        self._n += n
        i = self._pos.get(item)
        if i is not None:
            self._heap[i].count += n
            self._sift_down(i)
            return
        if len(self._heap) < self._cap:
            self._heap.append(_Counter(item, n, 0, self._seq))
            self._pos[item] = len(self._heap) - 1
            self._seq += 1
            self._sift_up(len(self._heap) - 1)
            return
        # Evict the smallest (oldest among equals); the newcomer inherits its count as error.
        low = self._heap[0]
        del self._pos[low.item]
        self._pos[item] = 0
        low.item, low.err, low.count, low.seq = item, low.count, low.count + n, self._seq
        self._seq += 1
        self._sift_down(0)

    def count(self, item: T) -> tuple[int, int]:
        """``(count, err)``: the true count of ``item`` lies in ``[count - err, count]``."""
        i = self._pos.get(item)
        if i is not None:
            return self._heap[i].count, self._heap[i].err
        m = self._min_count()
        return m, m

    def top(self, k: int) -> list[tuple[T, int, int]]:
        """Up to ``k`` ``(item, count, err)`` by count descending, then adoption order.

        Raises:
            ValueError: ``k <= 0``.
        """
        if k <= 0:
            raise ValueError(f"topk: k must be positive, got {k}")
        ranked = sorted(self._heap, key=lambda c: (-c.count, c.seq))
        return [(c.item, c.count, c.err) for c in ranked[:k]]

    def merge(self, other: SpaceSaving[T]) -> None:
        """Fold ``other`` in (it is unchanged); the result summarises both streams.

        An item missing from one sketch is charged that sketch's minimum counter as both
        count and error. Candidates are this sketch's heap array then ``other``'s new items
        in its heap array order, stably sorted by count descending; the first ``capacity``
        (this sketch's) are kept and re-adopted in that order, exactly as semblance does.
        """
        min_s, min_o = self._min_count(), other._min_count()
        entries: list[tuple[T, int, int]] = []
        for c in self._heap:
            j = other._pos.get(c.item)
            if j is not None:
                oc = other._heap[j]
                entries.append((c.item, c.count + oc.count, c.err + oc.err))
            else:
                entries.append((c.item, c.count + min_o, c.err + min_o))
        for c in other._heap:
            if c.item not in self._pos:
                entries.append((c.item, c.count + min_s, c.err + min_s))
        entries.sort(key=lambda e: -e[1])  # list.sort is stable, like slices.SortStableFunc
        self._n += other._n
        self._heap, self._pos, self._seq = [], {}, 0
        for item, count, err in entries[: self._cap]:
            self._heap.append(_Counter(item, count, err, self._seq))
            self._pos[item] = len(self._heap) - 1
            self._seq += 1
            self._sift_up(len(self._heap) - 1)

    def reset(self) -> None:
        """Empty the sketch for reuse (capacity is kept)."""
        self._heap, self._pos, self._n, self._seq = [], {}, 0, 0

    def _min_count(self) -> int:
        return self._heap[0].count if len(self._heap) >= self._cap else 0

    def _swap(self, i: int, j: int) -> None:
        heap = self._heap
        heap[i], heap[j] = heap[j], heap[i]
        self._pos[heap[i].item] = i
        self._pos[heap[j].item] = j

    def _sift_up(self, i: int) -> None:
        heap = self._heap
        while i > 0:
            parent = (i - 1) // 2
            if not heap[i].key() < heap[parent].key():
                return
            self._swap(i, parent)
            i = parent

    def _sift_down(self, i: int) -> None:
        heap, size = self._heap, len(self._heap)
        while True:
            child = 2 * i + 1
            if child >= size:
                return
            right = child + 1
            if right < size and heap[right].key() < heap[child].key():
                child = right
            if not heap[child].key() < heap[i].key():
                return
            self._swap(i, child)
            i = child
