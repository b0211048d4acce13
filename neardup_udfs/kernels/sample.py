"""semblance's ``sample``: deterministic reservoir sampling (Vitter's Algorithm R)."""

from __future__ import annotations

from typing import Generic, TypeVar

from neardup_udfs.kernels.hashing import SplitMix64
from neardup_udfs.kernels.readonly import ReadOnly

__all__ = ["Reservoir"]

T = TypeVar("T")


class Reservoir(Generic[T]):
    """A uniform sample of up to ``k`` items from a stream, driven by a SplitMix64 seed.

    The first ``k`` items fill the slots in order. Item number ``n > k`` draws
    ``j = (rng.next() * n) >> 64`` (Lemire's range reduction of a 128-bit product, uniform in
    ``[0, n)``) and replaces slot ``j`` when ``j < k``; the generator advances only then.

    Notes:
        After ``n`` items each one is in the sample with probability ``k / n`` (bias at most
        2**-64). The sample depends only on the seed and the stream order, identically on
        every platform; it may be read mid-stream and adding may continue. ``reset``
        restarts the generator from the seed, so replaying a stream reproduces the sample.
        Items are stored as given (no copy).

    Example:
        >>> r = Reservoir[int](5, seed=42)
        >>> for i in range(1000): r.add(i)
        >>> r.sample()
        [220, 320, 222, 925, 647]
    """

    __slots__ = ("_k", "_seed", "_rng", "_items", "_n")

    def __init__(self, k: int, seed: int = 0) -> None:
        if k <= 0:
            raise ValueError(f"sample: k must be positive, got {k}")
        self._k = int(k)
        self._seed = int(seed)
        self._rng = SplitMix64(self._seed)
        self._items: list[T] = []
        self._n = 0

    k = ReadOnly[int]("_k")
    n = ReadOnly[int]("_n", "Number of items observed.")

    def __len__(self) -> int:
        """Current sample size, ``min(k, n)``."""
        return len(self._items)

    def add(self, item: T) -> None:
        """Observe one item."""
        self._n += 1
        if len(self._items) < self._k:
            self._items.append(item)
            return
        j = (self._rng.next() * self._n) >> 64
        if j < self._k:
            self._items[j] = item

    def sample(self) -> list[T]:
        """A copy of the current sample, in slot order."""
        return list(self._items)

    def reset(self) -> None:
        """Empty the reservoir and restart the generator from the original seed."""
        self._items = []
        self._n = 0
        self._rng = SplitMix64(self._seed)
