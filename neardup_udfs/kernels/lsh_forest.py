"""semblance ``lsh.Forest``: LSH Forest top-k (Bawa, Condie and Ganesan, WWW 2005).

Query order: prefix depth descending, then tree, then sorted key, then insertion order.
Not safe for concurrent use.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

import numpy.typing as npt

from neardup_udfs.kernels.checks import as_signature, positive
from neardup_udfs.kernels.readonly import ReadOnly

__all__ = ["Forest"]


# --- Forest --------------------------------------------------------------------------------------


class Forest:
    """semblance ``lsh.Forest``: LSH Forest (Bawa, Condie and Ganesan 2005) for top-k search.

    A signature of ``trees * depth`` values is cut into ``trees`` keys of ``depth`` values;
    each tree keeps its entries sorted by (key, add sequence). The longer the prefix a stored
    key shares with the query's, the more similar the two are likely to be.

    Notes:
        ``query(sig, k)``: for prefix length ``d`` from ``depth`` down to 1, for tree 0 ..
        ``trees - 1``, the entries whose first ``d`` values equal the query's (in sorted
        order) contribute their unseen ids until ``k`` are found. Ids sharing not even the
        first value of any tree are never returned, so fewer than ``k`` results is possible.
        Sorting is lazy (paid by the first query after adds). Ids may repeat; ``remove``
        drops all their entries. ValueError when ``k <= 0`` or the signature length is not
        ``trees * depth``.

    Example:
        >>> f = Forest(2, 2)
        >>> f.add("a", [1, 2, 3, 4]); f.add("b", [1, 9, 9, 9]); f.add("c", [7, 7, 7, 7])
        >>> f.query([1, 2, 3, 5], 3)
        ['a', 'b']
    """

    def __init__(self, trees: int, depth: int) -> None:
        self._trees = positive("trees", trees)
        self._depth = positive("depth", depth)
        self._entries: list[list[tuple[tuple[int, ...], int, str]]] = [
            [] for _ in range(self._trees)
        ]
        self._dirty = False
        self._adds: dict[str, int] = {}
        self._seq = 0

    trees = ReadOnly[int]("_trees", "Number of trees.")
    depth = ReadOnly[int]("_depth", "Key length (signature values) per tree.")

    def _values(self, sig: npt.ArrayLike) -> list[int]:
        return as_signature(sig, self._trees * self._depth, "trees*depth").tolist()

    def add(self, id: str, sig: npt.ArrayLike) -> None:
        """Index ``id`` under ``sig`` (O(trees); the next query sorts)."""
        vals = self._values(sig)
        d = self._depth
        for t, entries in enumerate(self._entries):
            entries.append((tuple(vals[t * d : (t + 1) * d]), self._seq, id))
        self._seq += 1
        self._adds[id] = self._adds.get(id, 0) + 1
        self._dirty = True

    def _sort(self) -> None:
        if self._dirty:
            for entries in self._entries:
                entries.sort(key=lambda e: (e[0], e[1]))
            self._dirty = False

    def query(self, sig: npt.ArrayLike, k: int) -> list[str]:
        """Up to ``k`` ids by decreasing shared-prefix depth (see the class notes)."""
        vals = self._values(sig)
        want = positive("k", k)
        self._sort()
        out: list[str] = []
        seen: set[str] = set()
        depth = self._depth
        for d in range(depth, 0, -1):
            if len(out) >= want:
                break
            for t, entries in enumerate(self._entries):
                if len(out) >= want:
                    break
                prefix = tuple(vals[t * depth : t * depth + d])

                def head(e: tuple[tuple[int, ...], int, str], n: int = d) -> tuple[int, ...]:
                    return e[0][:n]

                lo = bisect_left(entries, prefix, key=head)
                hi = bisect_right(entries, prefix, lo=lo, key=head)
                for e in entries[lo:hi]:
                    if e[2] not in seen:
                        seen.add(e[2])
                        out.append(e[2])
                        if len(out) == want:
                            break
        return out

    def remove(self, id: str) -> bool:
        """Delete every entry of ``id``; report whether it was present."""
        if self._adds.pop(id, None) is None:
            return False
        for t, entries in enumerate(self._entries):
            self._entries[t] = [e for e in entries if e[2] != id]
        return True

    def __len__(self) -> int:
        return len(self._adds)

    def __contains__(self, id: object) -> bool:
        return id in self._adds

    def ids(self) -> Iterator[str]:
        """The distinct ids (semblance ``Range``; order unspecified — here first-add order)."""
        return iter(list(self._adds))
