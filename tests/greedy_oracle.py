"""The anchored clustering by hand: the sequential greedy pass, written for the tests only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Edge = tuple[str, str, float]


def oracle(
    edges: Iterable[Edge], rank: dict[str, Any], closer: str = "higher"
) -> dict[str, tuple[str, float]]:
    """node -> (representative, similarity): visit the nodes by (rank, id); keep a node no
    kept node is adjacent to; give every other node its most similar kept neighbour (ties:
    the one that comes first)."""
    adj: dict[str, dict[str, float]] = {}
    for a, b, s in edges:
        if a != b:
            for x, y in ((a, b), (b, a)):
                old = adj.setdefault(x, {}).get(y, s)
                adj[x][y] = max(s, old) if closer == "higher" else min(s, old)
    order = sorted(adj, key=lambda n: (rank[n], n))
    kept: set[str] = set()
    for n in order:
        if not kept & set(adj[n]):
            kept.add(n)
    out = {}
    for n in order:
        if n in kept:
            out[n] = (n, 1.0 if closer == "higher" else 0)
        else:
            sign = -1 if closer == "higher" else 1
            s, _, rep = min((sign * s, (rank[r], r), r) for r, s in adj[n].items() if r in kept)
            out[n] = (rep, sign * s)
    return out


def oracle_clusters(
    edges: Iterable[Edge], rank: dict[str, Any], closer: str = "higher"
) -> list[list[str]]:
    """The clusters of two or more members the greedy pass gives, sorted."""
    groups: dict[str, list[str]] = {}
    for node, (rep, _) in oracle(edges, rank, closer).items():
        groups.setdefault(rep, []).append(node)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)
