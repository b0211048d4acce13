"""semblance's lsh Forest (kernels.lsh_forest): goldens and orderings."""

from __future__ import annotations

import pytest
from semblance_golden import CORPUS, ORDER, SIGS

from neardup_udfs.kernels.lsh_forest import Forest


def test_forest_8x16_query_k3_golden() -> None:
    forest = Forest(8, 16)
    for id in ORDER:
        forest.add(id, SIGS[id])
    want = CORPUS["forest_8x16_query_k3"]
    for id in ORDER:
        assert forest.query(SIGS[id], 3) == want[id], id


# --- Forest --------------------------------------------------------------------------------------


def test_forest_depth_then_tree_then_key_order() -> None:
    f = Forest(2, 3)
    f.add("k100", [1, 0, 0, 9, 9, 9])
    f.add("t0_d2", [1, 2, 0, 9, 9, 9])
    f.add("t1_d3", [9, 9, 9, 4, 5, 6])
    f.add("none", [7, 7, 7, 7, 7, 7])
    f.add("k111", [1, 1, 1, 8, 8, 8])
    q = [1, 2, 3, 4, 5, 6]
    # Depth 3 (tree 1 only), depth 2 (tree 0), then depth 1 in tree 0 in sorted key order:
    # (1, 0, 0) < (1, 1, 1) < (1, 2, 0), whatever the insertion order.
    assert f.query(q, 10) == ["t1_d3", "t0_d2", "k100", "k111"]
    assert f.query(q, 2) == ["t1_d3", "t0_d2"]
    assert f.query(q, 3) == ["t1_d3", "t0_d2", "k100"]
    with pytest.raises(ValueError, match="k must"):
        f.query(q, 0)
    with pytest.raises(ValueError, match="does not match"):
        f.add("x", [1, 2, 3])
    with pytest.raises(ValueError, match="trees"):
        Forest(0, 3)


def test_forest_lifecycle() -> None:
    f = Forest(2, 2)
    f.add("a", [1, 2, 3, 4])
    f.add("a", [5, 6, 7, 8])
    f.add("b", [1, 2, 0, 0])
    assert len(f) == 2 and f.query([5, 6, 0, 0], 5) == ["a", "b"]
    assert f.remove("a") and not f.remove("a")
    assert f.query([5, 6, 7, 8], 5) == [] and f.query([1, 2, 3, 4], 5) == ["b"]
    f.add("c", [1, 2, 3, 4])  # add after a query: re-sorted lazily
    assert f.query([1, 2, 3, 4], 5) == ["b", "c"]  # depth 2, tree 0: equal keys in add order
    assert f.query([1, 0, 3, 4], 5) == ["c", "b"]  # depth 2 only in tree 1, then depth 1
    assert sorted(f.ids()) == ["b", "c"] and "a" not in f
