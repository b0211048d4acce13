"""Greedy representatives: the maximal independent set that a pass in a fixed order keeps.

The single-machine reference of the anchored cluster stage: visit the nodes in order; a node
no kept node is adjacent to is kept, and every neighbour of a kept node is removed. The kept
set is independent (no edge joins two kept nodes) and maximal (every removed node has a kept
neighbour), and it is the one set the parallel rounds of the stage converge to.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["greedy_keep"]


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
