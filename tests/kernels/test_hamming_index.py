"""ditto's banded Index: exact search, orderings, clamping, clusters."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.featurize import fingerprints
from neardup_udfs.kernels.hamming_index import Index, block_bounds, block_keys, clamp_k
from neardup_udfs.kernels.simhash import distance, distances, near, sum_features
from neardup_udfs.kernels.unionfind import UnionFind

u64 = st.integers(0, 2**64 - 1)


@pytest.mark.parametrize("k", range(64))
def test_blocks_cover_all_bits_with_floor_split(k: int) -> None:
    b = block_bounds(k)
    assert b[0] == 0 and b[-1] == 64 and len(b) == k + 2
    widths = np.diff(b)
    assert widths.min() >= 1 and widths.max() - widths.min() <= 1
    # Reassembling the blocks gives back the fingerprint.
    fp = np.array([0xDEADBEEFCAFEBABE], dtype=np.uint64)
    keys = block_keys(fp, k)[0]
    back = sum(int(v) << b[i] for i, v in enumerate(keys))
    assert back == 0xDEADBEEFCAFEBABE


@settings(max_examples=60, deadline=None)
@given(st.lists(u64, min_size=1, max_size=30), st.integers(0, 8), st.data())
def test_near_is_exact_and_ordered(fps: list[int], k: int, data: st.DataObject) -> None:
    # Plant near neighbours by flipping up to k bits of the first fingerprint.
    base = fps[0]
    for _ in range(5):
        bits = data.draw(st.lists(st.integers(0, 63), max_size=k, unique=True))
        fps.append(base ^ sum(1 << b for b in bits))
    index = Index(k)
    for i, fp in enumerate(fps):
        index.add(f"id{i:03d}", fp)
    got = [(m.distance, m.id) for m in index.near(base, k)]
    dist = [distance(base, fp) for fp in fps]
    want = sorted((d, f"id{i:03d}") for i, d in enumerate(dist) if d <= k)
    assert got == want


def test_near_clamps_down_and_rejects_negative() -> None:
    index = Index(2)
    index.add("a", 0)
    index.add("b", 0b111)  # 3 bits away
    assert [m.id for m in index.near(0, 10)] == ["a"]  # 10 is clamped to the build-time 2
    assert index.near(0, -1) == []
    assert index.k == 2 and len(index) == 2
    assert Index(100).k == 63 and Index(-3).k == 0


def test_duplicate_ids_are_separate_entries_and_ids_sort_bytewise() -> None:
    index = Index(3)
    for doc_id in ["b", "a", "a", "Z", "é"]:
        index.add(doc_id, 42)
    assert [m.id for m in index.near(42, 0)] == ["Z", "a", "a", "b", "é"]
    assert index.clusters(0, 2) == [["Z", "a", "a", "b", "é"]]


def test_clusters_are_single_link_and_ordered() -> None:
    index = Index(1)
    index.add("c1", 0b000)
    index.add("c2", 0b001)  # 1 from c1
    index.add("c3", 0b011)  # 1 from c2, 2 from c1: joined through c2
    index.add("x", 0xFFFF0000)
    index.add("y", 0xFFFF0001)
    index.add("lone", 0xF0F0F0F0F0F0F0F0)
    assert index.clusters(1, 2) == [["c1", "c2", "c3"], ["x", "y"]]
    assert index.clusters(1, 1) == [["c1", "c2", "c3"], ["x", "y"], ["lone"]]
    assert index.clusters(0, 2) == []
    assert index.clusters(-1, 1) == [["c1"], ["c2"], ["c3"], ["lone"], ["x"], ["y"]]


def test_union_find_rank_rule() -> None:
    uf = UnionFind(4)
    uf.union(0, 1)  # equal ranks: root of the first argument wins
    assert uf.find(1) == 0 and uf.rank[0] == 1
    uf.union(2, 0)  # rank 0 vs rank 1: the larger rank stays root
    assert uf.find(2) == 0
    assert uf.find(3) == 3


@given(u64, u64)
def test_distance_symmetric_and_bounded(a: int, b: int) -> None:
    d = distance(a, b)
    assert d == distance(b, a) and 0 <= d <= 64 and (d == 0) == (a == b)
    assert near(a, b, d) and not near(a, b, d - 1)
    arr = distances(np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64))
    assert int(arr[0]) == d


def test_saturating_sum_follows_go_order() -> None:
    big = 2**63 - 1
    # Exact integers would leave bit 0 positive; Go saturates at MaxInt64 first.
    assert sum_features([(1, big)] * 3 + [(0, big)] * 2) & 1 == 0
    assert sum_features([(0, -5), (0, 0)]) == 0  # weights <= 0 count as 1


@pytest.mark.parametrize("k", [2, 3])
def test_block_keys(ditto_golden: dict[str, Any], k: int) -> None:
    per_input = ditto_golden["per_input"]
    ids = sorted(per_input)
    fps = np.array([int(per_input[i]["fp_default_char4"], 16) for i in ids], dtype=np.uint64)
    keys = block_keys(fps, k)
    for row, doc_id in zip(keys, ids, strict=True):
        assert [f"{int(v):x}" for v in row] == per_input[doc_id][f"index_k{k}_block_keys_hex"]


def test_block_bounds(ditto_golden: dict[str, Any]) -> None:
    ex = ditto_golden["examples"]
    assert block_bounds(0) == ex["index_k0_bounds"]
    assert block_bounds(4) == ex["index_k4_bounds"]
    assert len(block_bounds(63)) == ex["index_k63_bounds_len"]
    assert block_bounds(2) == [0, 21, 42, 64]
    assert clamp_k(100) == ex["index_k_100_clamped"]
    assert clamp_k(-5) == ex["index_k_neg_clamped"]


def _corpus_index(golden_inputs: list[tuple[str, bytes]], k: int) -> Index:
    fps = fingerprints([d for _, d in golden_inputs])
    index = Index(k)
    for (doc_id, _), fp in zip(golden_inputs, fps, strict=True):
        index.add(doc_id, int(fp))
    return index


@pytest.mark.parametrize("k", [0, 3, 6, 10])
def test_corpus_near_and_clusters(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]], k: int
) -> None:
    want = ditto_golden["corpus"][f"k{k}"]
    index = _corpus_index(golden_inputs, k)
    fps = dict(
        zip([i for i, _ in golden_inputs], fingerprints([d for _, d in golden_inputs]), strict=True)
    )
    for doc_id, expected in want["near"].items():
        got = [f"{m.id}@{m.distance}" for m in index.near(int(fps[doc_id]), k)]
        assert got == expected, doc_id
    assert index.clusters(k, 1) == want["clusters_min1"]
    assert index.clusters(k, 2) == want["clusters_min2"]


def test_example_cluster_main(ditto_golden: dict[str, Any]) -> None:
    ex = ditto_golden["examples"]["example_cluster_main"]
    index = Index(4)
    fps = {doc_id: int(h, 16) for doc_id, h in ex["fingerprints"].items()}
    for doc_id, fp in fps.items():
        index.add(doc_id, fp)
    assert index.clusters(4, 2) == ex["clusters_k4_min2"]
    for other, d in ex["distances_from_phish_apple_1"].items():
        assert distance(fps["phish-apple-1"], fps[other]) == d
