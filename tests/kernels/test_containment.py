"""kernels.containment: prefix filtering finds exactly the pairs a brute force over every
pair finds, and the settling pass removes a set only next to a container that stays."""

from __future__ import annotations

import numpy as np
import pytest

from neardup_udfs.kernels.containment import (
    contained_pairs,
    containment_order,
    prefix_lengths,
    required_shared,
    settle_containment,
    shared_counts,
)


def _packed(sets: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Sets as ``(hashes, offsets)``, each ascending without repeats."""
    parts = [np.unique(np.asarray(s, dtype=np.uint64)) for s in sets]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    return np.concatenate(parts) if parts else np.zeros(0, np.uint64), offsets


def _random_sets(seed: int, n: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    universe = rng.integers(0, 2**64 - 1, size=150, dtype=np.uint64)  # hashes: any order
    sets = [rng.choice(universe, size=rng.integers(1, 70), replace=False) for _ in range(n)]
    # excerpts: subsets of earlier sets, some with a few foreign elements
    for i in range(n // 3):
        base = sets[i]
        part = base[: max(1, int(len(base) * rng.uniform(0.3, 1.0)))]
        extra = rng.choice(universe, size=rng.integers(0, 3), replace=False)
        sets.append(np.concatenate([part, extra]))
    return [s.tolist() for s in sets]


def _brute(sets: list[list[int]], rank: np.ndarray, t: float) -> set[tuple[int, int]]:
    out = set()
    for q, a in enumerate(sets):
        sa = set(a)
        for x, b in enumerate(sets):
            if rank[x] < rank[q] and len(sa & set(b)) >= t * len(sa) - 1e-9:
                out.add((q, x))
    return out


@pytest.mark.parametrize("t", [0.3, 0.5, 0.8, 0.85, 1.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_prefix_filtering_finds_exactly_the_brute_force_pairs(seed: int, t: float) -> None:
    sets = _random_sets(seed, 120)
    hashes, offsets = _packed(sets)
    sizes = np.diff(offsets)
    rank = containment_order(sizes, np.random.default_rng(seed).permutation(len(sets)))
    every = np.arange(len(sets))
    q, x, shared = contained_pairs(hashes, offsets, rank, t, every, every)
    assert set(zip(q.tolist(), x.tolist(), strict=True)) == _brute(sets, rank, t)
    both = contained_pairs(hashes, offsets, rank, t, every, every, workers=2)
    assert [a.tolist() for a in both] == [q.tolist(), x.tolist(), shared.tolist()]
    assert len(set(zip(q.tolist(), x.tolist(), strict=True))) == len(q)  # no pair twice
    assert shared.tolist() == shared_counts(hashes, offsets, q, x).tolist()
    truth = [len(set(sets[a]) & set(sets[b])) for a, b in zip(q, x, strict=True)]
    assert shared.tolist() == truth


def test_only_the_given_queries_and_containers_take_part() -> None:
    sets = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5], [1, 2, 3, 4]]
    hashes, offsets = _packed(sets)
    rank = containment_order(np.diff(offsets), np.arange(3))
    q, x, _ = contained_pairs(hashes, offsets, rank, 0.8, [2], [0, 1])
    assert sorted(zip(q.tolist(), x.tolist(), strict=True)) == [(2, 0), (2, 1)]
    q, x, _ = contained_pairs(hashes, offsets, rank, 0.8, [1, 2], [1])
    assert sorted(zip(q.tolist(), x.tolist(), strict=True)) == [(2, 1)]


def test_many_pairs_of_one_query_grow_the_buffer() -> None:
    # 3,000 containers of the one small set: more pairs than the first buffer holds
    sets = [[1, 2, 3, 4, 5, 100 + i] for i in range(3000)] + [[1, 2, 3, 4, 5]]
    hashes, offsets = _packed(sets)
    rank = containment_order(np.diff(offsets), np.arange(len(sets)))
    q, x, _ = contained_pairs(hashes, offsets, rank, 1.0, [3000], np.arange(3000))
    assert len(q) == 3000 and set(x.tolist()) == set(range(3000))


def test_required_shared_counts_whole_elements() -> None:
    # 0.8 * 35 is 28.000000000000004 in floating point: 28 shared elements are enough
    assert required_shared([35, 20, 1, 0], 0.8).tolist() == [28, 16, 1, 1]
    assert prefix_lengths([35, 20, 1], 0.8).tolist() == [8, 5, 1]
    assert prefix_lengths([10], 1.0).tolist() == [1]


def test_the_order_puts_bigger_sets_first_then_the_rule() -> None:
    assert containment_order([3, 5, 5, 1], [0, 2, 1, 3]).tolist() == [2, 1, 0, 3]


def test_an_excerpt_goes_only_next_to_a_container_that_stays() -> None:
    # 0 contains 1, 1 contains 2, but 2 is not contained enough in 0: 1 goes next to 0,
    # and 2, whose only container went, stays
    rank = np.array([0, 1, 2])
    rep, value = settle_containment(rank, [1, 2], [0, 1], [0.9, 0.95])
    assert rep.tolist() == [-1, 0, -1]
    assert value[1] == pytest.approx(0.9)


def test_the_most_contained_staying_container_is_chosen_ties_to_the_earliest() -> None:
    rank = np.array([0, 1, 2, 3])
    rep, value = settle_containment(rank, [3, 3, 3], [0, 1, 2], [0.85, 0.9, 0.9])
    assert rep.tolist() == [-1, -1, -1, 1] and value[3] == pytest.approx(0.9)


def test_a_pair_not_allowed_is_never_a_removal() -> None:
    rank = np.array([0, 1, 2])
    rep, _ = settle_containment(rank, [2, 2], [0, 1], [0.9, 0.8], allowed=[False, True])
    assert rep.tolist() == [-1, -1, 1]
    rep, _ = settle_containment(rank, [2], [0], [0.9], allowed=[False])
    assert rep.tolist() == [-1, -1, -1]


def test_a_container_after_its_excerpt_is_refused() -> None:
    with pytest.raises(ValueError, match="before its excerpt"):
        settle_containment(np.array([1, 0]), [1], [0], [0.9])


def test_random_graphs_settle_consistently() -> None:
    sets = _random_sets(7, 150)
    hashes, offsets = _packed(sets)
    sizes = np.diff(offsets)
    rank = containment_order(sizes, np.arange(len(sets)))
    every = np.arange(len(sets))
    q, x, shared = contained_pairs(hashes, offsets, rank, 0.8, every, every)
    rep, value = settle_containment(rank, q, x, shared / sizes[q])
    pairs = set(zip(q.tolist(), x.tolist(), strict=True))
    for i in np.flatnonzero(rep >= 0):
        assert rep[rep[i]] == -1 and (i, rep[i]) in pairs  # next to one that stays
    for a, b in pairs:  # a set that stays has no container that stays
        assert rep[a] >= 0 or rep[b] >= 0
