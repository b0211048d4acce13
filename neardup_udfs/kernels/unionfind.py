"""Union-find (disjoint sets): ditto's ``Clusters`` (path halving, union by rank) and
semblance's ``cluster.Set`` (string ids, earliest-added member is the representative)."""

from __future__ import annotations

__all__ = ["ClusterSet", "UnionFind"]


class UnionFind:
    """Disjoint sets over ``0..n-1``.

    Notes:
        ``find`` halves paths. ``union(a, b)`` makes the root of larger rank the parent; on
        equal ranks the root of ``a`` wins and its rank grows by one (ditto's rule, which
        fixes which member is the root; the sets themselves do not depend on it).

    Example:
        >>> uf = UnionFind(3); uf.union(0, 2); uf.find(2) == uf.find(0)
        True
    """

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.rank = [0] * n

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.rank[ra] < self.rank[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        if self.rank[ra] == self.rank[rb]:
            self.rank[ra] += 1


class ClusterSet:
    """semblance ``cluster.Set``: union-find over string ids, earliest-added member wins.

    Notes:
        Every id gets an insertion index the first time ``add`` or ``union`` sees it (``union``
        registers ``a`` before ``b``). ``union`` links the root with the larger insertion
        index under the smaller one (no rank), so a cluster's representative is always its
        earliest-added member. ``find`` halves paths, so even reads mutate (not thread-safe).
        ``clusters()`` lists every cluster, singletons included: clusters in their
        representatives' insertion order, members in insertion order (representative first).

    Example:
        >>> cs = ClusterSet(); cs.add("lonely"); cs.union("a", "b"); cs.union("c", "d")
        >>> cs.union("b", "c"); cs.clusters()
        [['lonely'], ['a', 'b', 'c', 'd']]
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._parent: list[int] = []

    def _register(self, id: str) -> int:
        i = self._index.get(id)
        if i is None:
            i = len(self._ids)
            self._index[id] = i
            self._ids.append(id)
            self._parent.append(i)
        return i

    def _root(self, i: int) -> int:
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    def add(self, id: str) -> None:
        """Register ``id`` as a singleton (a no-op when it is already known)."""
        self._register(id)

    def union(self, a: str, b: str) -> None:
        """Merge the clusters of ``a`` and ``b``, registering either if new (``a`` first)."""
        ra = self._root(self._register(a))
        rb = self._root(self._register(b))
        if ra == rb:
            return
        if rb < ra:
            ra, rb = rb, ra
        self._parent[rb] = ra

    def find(self, id: str) -> tuple[str, bool]:
        """``(representative, True)`` for a known id, ``("", False)`` otherwise."""
        i = self._index.get(id)
        if i is None:
            return "", False
        return self._ids[self._root(i)], True

    def same(self, a: str, b: str) -> bool:
        """True iff both ids are known and in the same cluster."""
        ia = self._index.get(a)
        ib = self._index.get(b)
        return ia is not None and ib is not None and self._root(ia) == self._root(ib)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, id: object) -> bool:
        return id in self._index

    def clusters(self) -> list[list[str]]:
        """Every cluster: representative insertion order, members in insertion order."""
        groups: dict[int, list[str]] = {}
        for i, id in enumerate(self._ids):
            groups.setdefault(self._root(i), []).append(id)
        return list(groups.values())
