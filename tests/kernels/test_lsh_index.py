"""semblance's lsh Index and VerifiedIndex (kernels.lsh_index): goldens, orderings, and
removal properties (of every lsh structure).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import CORPUS, ORDER, PRIMS, SIGS, float_bits

from neardup_udfs.kernels.lsh import band_keys, threshold
from neardup_udfs.kernels.lsh_forest import Forest
from neardup_udfs.kernels.lsh_hamming import HammingIndex
from neardup_udfs.kernels.lsh_index import Index, Neighbor, Stats, VerifiedIndex


def _go_v(x: float) -> str:
    """Go's %v of a float64 in [0, 1] (shortest repr, no trailing '.0')."""
    s = repr(x)
    return s[:-2] if s.endswith(".0") else s


def test_index_16x8_threshold() -> None:
    want = PRIMS["index_16x8_threshold"]
    got = Index(16, 8).threshold()
    assert math.isclose(got, float(want["repr"]), rel_tol=1e-15, abs_tol=0.0)  # §1.6
    assert float_bits(got) == want["bits"]  # and, with our Go-Pow emulation, bit for bit
    assert VerifiedIndex(16, 8).threshold() == got
    assert threshold(1, 7) == 1.0 and threshold(5, 1) == 0.2 and threshold(4, 2) == 0.5


# --- corpus goldens (inputs added in the golden's file order) ----------------------------------


def test_lsh_index_16x8_query_golden() -> None:
    ix = Index(16, 8)
    for id in ORDER:
        ix.add(id, SIGS[id])
    want = CORPUS["lsh_index_16x8_query"]
    assert set(want) == set(ORDER)
    for id in ORDER:
        assert ix.query(SIGS[id]) == want[id], id
    assert len(ix) == len(ORDER)


def test_lsh_index_add_many_equals_sequential_adds() -> None:
    one, many = Index(16, 8), Index(16, 8)
    for id in ORDER:
        one.add(id, SIGS[id])
    many.add_many(ORDER, np.stack([SIGS[id] for id in ORDER]))
    assert one.stats() == many.stats()
    for id in ORDER:
        assert one.query(SIGS[id]) == many.query(SIGS[id])
    with pytest.raises(ValueError, match="ids"):
        many.add_many(["x"], np.stack([SIGS["fox"], SIGS["fox"]]))


def test_verified_index_16x8_query_min_half_golden() -> None:
    vi = VerifiedIndex(16, 8)
    for id in ORDER:
        vi.add(id, SIGS[id])
    want = CORPUS["verified_index_16x8_query_min0.5"]
    for id in ORDER:
        got = [f"{n.id}={_go_v(n.similarity)}" for n in vi.query(SIGS[id], 0.5)]
        assert got == want[id], id


# --- Index / VerifiedIndex behaviour ------------------------------------------------------------


def _rand_sig(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**64, size=n, dtype=np.uint64)


def test_index_stats_and_lifecycle() -> None:
    rng = np.random.default_rng(91)
    ix = Index(4, 4)
    assert ix.stats() == Stats(0, 0, 0, 0)
    shared = _rand_sig(rng, 16)
    for id in ("a", "b", "c"):
        ix.add(id, shared)
    ix.add("lone", _rand_sig(rng, 16))
    assert ix.stats() == Stats(ids=4, buckets=8, entries=16, max_bucket=3)
    assert ix.remove("b") and ix.remove("lone") and not ix.remove("lone")
    assert ix.stats() == Stats(ids=2, buckets=4, entries=8, max_bucket=2)
    assert sorted(ix.ids()) == ["a", "c"] and "a" in ix and "b" not in ix


def test_index_candidate_rules() -> None:
    ix = Index(4, 4)
    base = np.arange(100, 116, dtype=np.uint64)
    one_band = np.arange(200, 216, dtype=np.uint64)
    one_band[8:12] = base[8:12]  # band 2 equal
    near_miss = base.copy()
    near_miss[::4] += np.uint64(1)  # rows-1 of every band equal: no band matches
    ix.add("one_band", one_band)
    ix.add("near_miss", near_miss)
    assert ix.query(base) == ["one_band"]
    assert ix.query(np.zeros(16, np.uint64)) == []
    with pytest.raises(ValueError, match="does not match"):
        ix.query(np.zeros(15, np.uint64))
    with pytest.raises(ValueError, match="bands"):
        Index(0, 4)


def test_index_duplicate_ids_are_returned_once_and_fully_removed() -> None:
    ix = Index(2, 2)
    ix.add("x", [1, 2, 3, 4])
    ix.add("y", [1, 2, 0, 0])
    ix.add("x", [1, 2, 3, 4])
    ix.add("x", [0, 0, 3, 4])
    assert ix.query([1, 2, 3, 4]) == ["x", "y"]
    assert len(ix) == 2 and ix.stats().entries == 8
    assert ix.remove("x")
    assert ix.query([1, 2, 3, 4]) == ["y"] and ix.query([0, 0, 3, 4]) == []
    assert ix.stats() == Stats(1, 2, 2, 1)


def test_verified_index_ranking_readd_and_copies() -> None:
    vi = VerifiedIndex(2, 2)
    q = np.array([1, 2, 3, 4], np.uint64)
    vi.add("c", [1, 2, 9, 9])  # 0.5
    vi.add("b", [1, 2, 3, 9])  # 0.75
    vi.add("a", [1, 2, 9, 8])  # 0.5
    vi.add("self", q)
    got = vi.query(q)
    assert got == [
        Neighbor("self", 1.0),
        Neighbor("b", 0.75),
        Neighbor("a", 0.5),
        Neighbor("c", 0.5),
    ]
    assert [n.id for n in vi.query(q, 0.75)] == ["self", "b"]
    # Same candidates as an Index over the same adds (min_jaccard 0 keeps every candidate).
    ix = Index(2, 2)
    for id in ("c", "b", "a", "self"):
        ix.add(id, vi.signature(id))  # type: ignore[arg-type]
    assert sorted(ix.query(q)) == sorted(n.id for n in got)
    # The stored signature is a copy, both ways.
    buf = np.array([5, 6, 7, 8], np.uint64)
    vi.add("buf", buf)
    buf[:] = 0
    stored = vi.signature("buf")
    assert stored is not None and stored.tolist() == [5, 6, 7, 8]
    stored[:] = 0
    assert vi.signature("buf").tolist() == [5, 6, 7, 8]  # type: ignore[union-attr]
    assert vi.signature("missing") is None
    # Re-add replaces the signature without stale bucket entries.
    before = vi.stats()
    vi.add("buf", [7, 7, 7, 7])
    assert vi.stats().entries == before.entries
    assert vi.query([5, 6, 7, 8]) == []
    assert vi.query([7, 7, 0, 0]) == [Neighbor("buf", 0.5)]
    assert len(vi) == 5 and vi.remove("buf") and not vi.remove("buf") and len(vi) == 4


def test_verified_index_orders_ids_bytewise() -> None:
    vi = VerifiedIndex(1, 2)
    for id in ("é", "z", "Z", "a"):
        vi.add(id, [1, 2])
    assert [n.id for n in vi.query([1, 2])] == ["Z", "a", "z", "é"]


# --- Index oracle and removal properties ---------------------------------------------------------

small_sigs = st.lists(st.lists(st.integers(0, 2), min_size=4, max_size=4), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(small_sigs, st.lists(st.integers(0, 2), min_size=4, max_size=4))
def test_index_query_returns_every_signature_sharing_a_band_key(
    sigs: list[list[int]], q: list[int]
) -> None:
    ix = Index(2, 2)
    ids = [f"s{i}" for i in range(len(sigs))]
    for id, sig in zip(ids, sigs, strict=True):
        ix.add(id, sig)
    qk = band_keys(q, 2, 2).tolist()
    want: list[str] = []
    for band in range(2):
        for id, sig in zip(ids, sigs, strict=True):
            if band_keys(sig, 2, 2).tolist()[band] == qk[band] and id not in want:
                want.append(id)
    assert ix.query(q) == want
    # A stored signature always finds itself.
    for id, sig in zip(ids, sigs, strict=True):
        assert id in ix.query(sig)


def _fresh_equal(make: Callable[[], Any], adds: list[tuple[str, Any]], built: Any) -> None:
    """``built`` answers like a structure built from ``adds`` alone (same order)."""
    fresh = make()
    for id, x in adds:
        fresh.add(id, x)
    assert len(built) == len(fresh)
    if hasattr(built, "stats"):
        assert built.stats() == fresh.stats()
    for _, x in adds:
        if isinstance(built, Forest):
            assert built.query(x, 50) == fresh.query(x, 50)
        else:
            assert built.query(x) == fresh.query(x)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcdef"), st.lists(st.integers(0, 2), min_size=4, max_size=4))
    ),
    st.lists(st.sampled_from("abcdefg"), max_size=4),
)
def test_remove_really_removes(adds: list[tuple[str, list[int]]], gone: list[str]) -> None:
    makers: list[tuple[Callable[[], Any], Callable[[list[int]], Any]]] = [
        (lambda: Index(2, 2), lambda s: s),
        (lambda: VerifiedIndex(2, 2), lambda s: s),
        (lambda: Forest(2, 2), lambda s: s),
        (lambda: HammingIndex(1), lambda s: (s[0] << 62) | (s[1] << 20) | (s[2] << 40) | s[3]),
    ]
    for make, conv in makers:
        built = make()
        items = [(id, conv(s)) for id, s in adds]
        for id, x in items:
            built.add(id, x)
        present = {id for id, _ in items}
        for id in gone:
            assert built.remove(id) == (id in present)
            present.discard(id)
        for _, x in items:
            hits = built.query(x, 50) if isinstance(built, Forest) else built.query(x)
            ids = [h.id if isinstance(h, Neighbor) else h for h in hits]
            assert not set(ids) & set(gone)
        # What is left answers exactly like a structure that never saw the removed ids.
        _fresh_equal(make, [(id, x) for id, x in items if id not in gone], built)
        if hasattr(built, "stats"):
            assert built.stats().ids == len(present)
