"""Union-find (disjoint sets) as ditto's ``Clusters`` uses it: path halving, union by rank."""

from __future__ import annotations

__all__ = ["UnionFind"]


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
