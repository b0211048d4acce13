"""Greedy representatives: the maximal independent set that a pass in a fixed order keeps.

The single-machine reference of the anchored cluster stage: visit the nodes in order; a node
no kept node is adjacent to is kept, and every neighbour of a kept node is removed. The kept
set is independent (no edge joins two kept nodes) and maximal (every removed node has a kept
neighbour), and it is the one set the parallel rounds of the stage converge to.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["AnchoredInconsistent", "edge_nodes", "greedy_assignment", "greedy_keep"]


class AnchoredInconsistent(RuntimeError):
    """Two representatives are a verified pair, or a removed node has no representative."""


def greedy_keep(n: int, src: npt.ArrayLike, dst: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Which of the nodes ``0..n-1``, visited in index order, the greedy pass keeps.

    Args:
        n: the number of nodes; node ``i`` is the ``i``-th in the order.
        src, dst: the edges (undirected; duplicates, both directions and self-loops allowed,
            a self-loop is ignored).

    Returns:
        ``keep[i]``: True when no node before ``i`` that is kept is adjacent to ``i``.

    Example:
        >>> greedy_keep(4, [0, 1, 2], [1, 2, 3]).tolist()  # the chain 0-1-2-3
        [True, False, True, False]
    """
    a = np.asarray(src, dtype=np.int64).ravel()
    b = np.asarray(dst, dtype=np.int64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"src and dst differ in length: {a.size} != {b.size}")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n):
        raise ValueError(f"an edge names a node outside 0..{n - 1}")
    loop = a == b
    a, b = a[~loop], b[~loop]
    # only the later end of an edge can be removed by the earlier one: keep (earlier, later)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    start = np.searchsorted(lo, np.arange(n + 1))
    keep = np.ones(n, dtype=np.bool_)
    later = hi.tolist()
    bounds = start.tolist()
    for i in range(n):
        if keep[i]:
            for j in later[bounds[i] : bounds[i + 1]]:
                keep[j] = False
    return keep


def greedy_assignment(
    lo: npt.NDArray[np.int64],
    hi: npt.NDArray[np.int64],
    values: npt.NDArray[Any],
    higher_is_closer: bool,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[Any]]:
    """The anchored assignment of a whole graph: ``node, rep, value`` arrays, one row per node
    of an edge (nodes as given: ordinals, smaller first in the rule's order). The kept nodes
    are :func:`greedy_keep`'s, each its own rep with its own value (1.0 when higher is
    closer, else 0); every other node's rep is its closest kept neighbour (ties: the
    earlier), with that edge's value. Edges may repeat (the closest value counts); these are
    the representatives and choices of the anchored stage's parallel rounds.
    AnchoredInconsistent if the pass's own guarantees fail (never expected)."""
    nodes, li, hi_i = edge_nodes(lo, hi)
    keep = greedy_keep(len(nodes), li, hi_i)
    if (keep[li] & keep[hi_i]).any():
        raise AnchoredInconsistent("two representatives are a verified pair")
    # every edge between a kept and a removed node is an offer to the removed one; it takes
    # the closest, ties by the representative's place in the order
    offer = keep[li] != keep[hi_i]
    node = np.where(keep[li], hi_i, li)[offer]
    rep = np.where(keep[li], li, hi_i)[offer]
    value = values[offer]
    pick = np.lexsort((rep, -value if higher_is_closer else value, node))
    first = np.ones(len(pick), dtype=np.bool_)
    first[1:] = node[pick][1:] != node[pick][:-1]
    chosen = pick[first]
    if len(chosen) != int((~keep).sum()):
        raise AnchoredInconsistent("a removed node has no adjacent representative")
    own = 1.0 if higher_is_closer else 0
    kept = nodes[keep]
    return (
        np.concatenate([kept, nodes[node[chosen]]]),
        np.concatenate([kept, nodes[rep[chosen]]]),
        np.concatenate([np.full(len(kept), own, dtype=values.dtype), value[chosen]]),
    )


def edge_nodes(lo: npt.NDArray[np.int64], hi: npt.NDArray[np.int64]) -> Any:
    """The nodes of the edges ``lo, hi`` in ascending order, and each end's place among them
    (``nodes, place of lo, place of hi``)."""
    nodes, place = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    return nodes, place[: len(lo)], place[len(lo) :]
