"""semblance's lsh package and cluster.Set: goldens, orderings and properties."""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.hashing import mix_fold
from neardup_udfs.kernels.lsh import (
    band_keys,
    band_keys_batch,
    candidate_probability,
    params,
    threshold,
)
from neardup_udfs.kernels.lsh_forest import Forest
from neardup_udfs.kernels.lsh_hamming import HammingIndex
from neardup_udfs.kernels.lsh_index import Index, Neighbor, Stats, VerifiedIndex
from neardup_udfs.kernels.minhash import jaccard
from neardup_udfs.kernels.simhash import distance
from neardup_udfs.kernels.unionfind import ClusterSet

GOLDEN: dict[str, Any] = json.loads(
    (Path(__file__).parent / "golden" / "generated-semblance.json").read_text()
)
ORDER: list[str] = [i["id"] for i in GOLDEN["inputs"]]  # the golden's file order
PER_INPUT: dict[str, Any] = GOLDEN["per_input"]
CORPUS: dict[str, Any] = GOLDEN["corpus"]
PRIMS: dict[str, Any] = GOLDEN["primitives"]

u64 = st.integers(0, 2**64 - 1)


def _sig(id: str) -> np.ndarray:
    return np.array([int(h, 16) for h in PER_INPUT[id]["minhash_default_signature"]], np.uint64)


SIGS = {id: _sig(id) for id in ORDER}
SIMHASH_W3 = {id: int(PER_INPUT[id]["simhash_w3"], 16) for id in ORDER}


def _hex(keys: np.ndarray) -> list[str]:
    return [f"{k:016x}" for k in keys.tolist()]


def _go_v(x: float) -> str:
    """Go's %v of a float64 in [0, 1] (shortest repr, no trailing '.0')."""
    s = repr(x)
    return s[:-2] if s.endswith(".0") else s


def _bits(x: float) -> str:
    return struct.pack(">d", x).hex()


# --- band keys -----------------------------------------------------------------------------------


def test_bandkeys_golden_sig_1_to_8() -> None:
    want = PRIMS["bandkeys_golden_sig_1_to_8_b2_r4"]
    sig = np.arange(1, 9, dtype=np.uint64)
    assert _hex(band_keys(sig, 2, 4)) == want
    assert _hex(band_keys_batch(sig[None, :], 2, 4)[0]) == want


def test_band_keys_16x8_every_golden_input() -> None:
    batch = band_keys_batch(np.stack([SIGS[id] for id in ORDER]), 16, 8)
    assert batch.shape == (len(ORDER), 16) and batch.dtype == np.uint64
    for row, id in enumerate(ORDER):
        want = PER_INPUT[id]["lsh_band_keys_16x8"]
        assert _hex(band_keys(SIGS[id], 16, 8)) == want, id
        assert _hex(batch[row]) == want, id


def test_shared_band_keys_of_golden_pairs() -> None:
    for pair in GOLDEN["pairs"]:
        a = band_keys(SIGS[pair["a"]], 16, 8)
        b = band_keys(SIGS[pair["b"]], 16, 8)
        assert int(np.count_nonzero(a == b)) == pair["shared_band_keys_16x8"], pair


def test_band_keys_reject_bad_shapes() -> None:
    with pytest.raises(ValueError, match="bands"):
        band_keys([1, 2], 0, 2)
    with pytest.raises(ValueError, match="rows"):
        band_keys([1, 2], 2, -1)
    with pytest.raises(ValueError, match="does not match"):
        band_keys([1, 2, 3], 2, 2)
    with pytest.raises(ValueError, match="2-D"):
        band_keys_batch([1, 2, 3, 4], 2, 2)
    with pytest.raises(ValueError, match="does not match"):
        band_keys_batch(np.zeros((3, 5), np.uint64), 2, 2)
    assert band_keys_batch(np.zeros((0, 4), np.uint64), 2, 2).shape == (0, 2)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 5), st.data())
def test_band_keys_batch_equals_band_keys_and_mix_fold(
    bands: int, rows: int, n: int, data: st.DataObject
) -> None:
    sigs = [
        data.draw(st.lists(u64, min_size=bands * rows, max_size=bands * rows)) for _ in range(n)
    ]
    arr = np.array(sigs, dtype=np.uint64).reshape(n, bands * rows)
    batch = band_keys_batch(arr, bands, rows)
    assert batch.shape == (n, bands)
    for i, sig in enumerate(sigs):
        one = band_keys(arr[i], bands, rows)
        assert batch[i].tolist() == one.tolist()
        assert one.tolist() == [mix_fold(sig[b * rows : (b + 1) * rows]) for b in range(bands)]


# --- thresholds and params -----------------------------------------------------------------------

_GRID = re.compile(r"k=(\d+) target=([\d.]+) -> bands=(\d+) rows=(\d+) threshold=(\S+)$")


def _grid() -> list[tuple[int, float, int, int, float]]:
    out = []
    for line in PRIMS["lsh_params_grid"]:
        m = _GRID.match(line)
        assert m, line
        out.append((int(m[1]), float(m[2]), int(m[3]), int(m[4]), float(m[5])))
    return out


GRID = _grid()


def test_params_grid_has_64_cases() -> None:
    assert len(GRID) == 64


@pytest.mark.parametrize(("k", "target", "bands", "rows", "thr"), GRID)
def test_params_grid(k: int, target: float, bands: int, rows: int, thr: float) -> None:
    assert params(k, target) == (bands, rows)
    # Go's math.Pow may differ from another implementation by 1 ulp (spec §1.6), so the
    # threshold float is compared with a 1e-15 relative tolerance, not bit for bit.
    assert math.isclose(threshold(bands, rows), thr, rel_tol=1e-15, abs_tol=0.0)


def test_threshold_emulation_matches_every_golden_bit() -> None:
    # Stronger than the spec requires: our emulation of Go's amd64 FMA Exp/Log path is plain
    # IEEE float64 arithmetic (deterministic on any host) and reproduces all 64 golden bits.
    assert [threshold(b, r) for _, _, b, r, _ in GRID] == [t for *_, t in GRID]


def test_index_16x8_threshold() -> None:
    want = PRIMS["index_16x8_threshold"]
    got = Index(16, 8).threshold()
    assert math.isclose(got, float(want["repr"]), rel_tol=1e-15, abs_tol=0.0)  # §1.6
    assert _bits(got) == want["bits"]  # and, with our Go-Pow emulation, bit for bit
    assert VerifiedIndex(16, 8).threshold() == got
    assert threshold(1, 7) == 1.0 and threshold(5, 1) == 0.2 and threshold(4, 2) == 0.5


def test_params_examples_ties_and_errors() -> None:
    assert params(128, 0.71) == (16, 8)
    assert params(1, 0.5) == (1, 1)
    # k = 2: thresholds 1.0 (1 band) and 0.5 (2 bands) are equally far from 0.75 -> more bands.
    assert abs(threshold(1, 2) - 0.75) == abs(threshold(2, 1) - 0.75)
    assert params(2, 0.75) == (2, 1)
    assert params(2, math.nextafter(0.75, 1.0)) == (1, 2)
    for bad_k in (0, -4):
        with pytest.raises(ValueError, match="k must"):
            params(bad_k, 0.5)
    for bad_t in (0.0, 1.0, -0.1, 1.5, math.nan):
        with pytest.raises(ValueError, match="threshold"):
            params(128, bad_t)
    with pytest.raises(ValueError, match="bands"):
        threshold(0, 8)
    with pytest.raises(ValueError, match="rows"):
        threshold(16, 0)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.floats(0.01, 0.99))
def test_params_picks_the_closest_divisor_with_ties_to_more_bands(k: int, target: float) -> None:
    bands, rows = params(k, target)
    assert bands * rows == k
    best = abs(threshold(bands, rows) - target)
    for b in range(1, k + 1):
        if k % b == 0:
            d = abs(threshold(b, k // b) - target)
            assert d >= best
            if b > bands:
                assert d > best


def test_candidate_probability() -> None:
    assert candidate_probability(0.0, 16, 8) == 0.0
    assert candidate_probability(1.0, 16, 8) == 1.0
    assert candidate_probability(0.9, 16, 8) > 0.9998
    assert candidate_probability(0.1, 16, 8) < 2e-7
    # The S-curve crosses about 1/2 near the threshold.
    assert abs(candidate_probability(threshold(16, 8), 16, 8) - 0.5) < 0.15
    with pytest.raises(ValueError, match="jaccard"):
        candidate_probability(1.5, 16, 8)
    with pytest.raises(ValueError, match="bands"):
        candidate_probability(0.5, 0, 8)


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


def test_forest_8x16_query_k3_golden() -> None:
    forest = Forest(8, 16)
    for id in ORDER:
        forest.add(id, SIGS[id])
    want = CORPUS["forest_8x16_query_k3"]
    for id in ORDER:
        assert forest.query(SIGS[id], 3) == want[id], id


def test_hamming_index_d3_query_simhash_w3_golden() -> None:
    hx = HammingIndex(3)
    for id in ORDER:
        hx.add(id, SIMHASH_W3[id])
    want = CORPUS["hamming_index_d3_query_simhash_w3"]
    for id in ORDER:
        assert hx.query(SIMHASH_W3[id]) == want[id], id


def test_dedup_pipeline_clusters_threshold_half_golden() -> None:
    # semblance cluster/example_test.go: per document in order, register it, query the index
    # (earlier documents only), union every candidate with raw Jaccard >= 0.5 (no degenerate
    # check: all empty-set signatures are 'identical'), then add the document.
    ix = Index(16, 8)
    cs = ClusterSet()
    for id in ORDER:
        sig = SIGS[id]
        cs.add(id)
        for cand in ix.query(sig):
            if jaccard(sig, SIGS[cand]) >= 0.5:
                cs.union(cand, id)
        ix.add(id, sig)
    assert cs.clusters() == CORPUS["dedup_pipeline_clusters_threshold0.5"]


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


# --- HammingIndex --------------------------------------------------------------------------------


def test_hamming_block_layout() -> None:
    assert HammingIndex(1).blocks == ((0, 32), (32, 32))
    assert HammingIndex(2).blocks == ((0, 22), (22, 21), (43, 21))
    assert HammingIndex(3).blocks == ((0, 16), (16, 16), (32, 16), (48, 16))
    for bad in (0, 4, -1):
        with pytest.raises(ValueError, match="max_dist"):
            HammingIndex(bad)


def test_hamming_order_block_then_insertion_and_stats() -> None:
    base = 0xDEADBEEFCAFEF00D
    hx = HammingIndex(1)
    hx.add("a", base)
    hx.add("b", base ^ 1)  # differs in block 0: found through block 1
    hx.add("c", base ^ (1 << 40))  # differs in block 1: found through block 0
    assert hx.query(base) == ["a", "c", "b"]
    assert hx.query(base ^ 0b11) == ["b"]
    hx2 = HammingIndex(1)
    assert hx2.stats() == Stats(0, 0, 0, 0)
    hx2.add("a", base)
    hx2.add("b", base)
    hx2.add("c", base ^ (1 << 3))
    assert hx2.stats() == Stats(3, 3, 6, 3)
    assert hx2.remove("b") and not hx2.remove("b")
    assert hx2.stats() == Stats(2, 3, 4, 2)
    assert sorted(hx2.items()) == [("a", base), ("c", base ^ 8)]
    with pytest.raises(ValueError, match="fingerprint"):
        hx2.add("neg", -1)


@pytest.mark.parametrize("max_dist", [1, 2, 3])
def test_hamming_flips_found_iff_within_max_dist(max_dist: int) -> None:
    base = 0x0123456789ABCDEF
    hx = HammingIndex(max_dist)
    layouts = {
        "spread": [0, 21, 43, 63],
        "same_block": [1, 2, 3, 4],
        "straddle": [15, 16, 31, 32],
    }
    for name, bits in layouts.items():
        for d in range(5):
            hx.add(f"{name}{d}", base ^ sum(1 << b for b in bits[:d]))
    got = set(hx.query(base))
    want = {f"{n}{d}" for n in layouts for d in range(5) if d <= max_dist}
    assert got == want


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 3), st.lists(u64, min_size=1, max_size=25), st.data())
def test_hamming_index_is_exact_vs_brute_force(
    max_dist: int, fps: list[int], data: st.DataObject
) -> None:
    base = fps[0]
    for _ in range(6):  # plant neighbours at distance 0..max_dist+1
        bits = data.draw(st.lists(st.integers(0, 63), max_size=max_dist + 1, unique=True))
        fps.append(base ^ sum(1 << b for b in bits))
    hx = HammingIndex(max_dist)
    ids = [f"id{i:02d}" for i in range(len(fps))]
    for id, fp in zip(ids, fps, strict=True):
        hx.add(id, fp)
    for q in (base, data.draw(u64)):
        got = hx.query(q)
        assert len(got) == len(set(got))
        assert set(got) == {
            id for id, fp in zip(ids, fps, strict=True) if distance(fp, q) <= max_dist
        }
        # Order: first block whose key matches, then insertion order.
        want: list[str] = []
        for shift, width in hx.blocks:
            mask = (1 << width) - 1
            for id, fp in zip(ids, fps, strict=True):
                hit = (fp >> shift) & mask == (q >> shift) & mask
                if hit and distance(fp, q) <= max_dist and id not in want:
                    want.append(id)
        assert got == want


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


# --- cluster.Set ---------------------------------------------------------------------------------


def test_cluster_basics_golden() -> None:
    cs = ClusterSet()
    cs.add("lonely")
    cs.union("a", "b")
    cs.union("c", "d")
    cs.union("b", "c")
    assert cs.clusters() == PRIMS["cluster_basics_clusters"]
    assert len(cs) == 5
    assert cs.find("d") == ("a", True) and cs.find("lonely") == ("lonely", True)
    assert cs.find("nobody") == ("", False)
    assert cs.same("b", "d") and not cs.same("a", "lonely") and not cs.same("a", "nobody")
    cs.add("a")  # no-op for a known id
    assert len(cs) == 5


def test_cluster_representative_is_earliest_added() -> None:
    cs = ClusterSet()
    cs.union("m", "n")
    cs.add("q")
    cs.union("o", "p")
    cs.union("p", "m")
    assert cs.clusters() == [["m", "n", "o", "p"], ["q"]]
    assert cs.find("p") == ("m", True)
    cs2 = ClusterSet()
    for id in ("first", "second", "third"):
        cs2.add(id)
    cs2.union("second", "third")
    cs2.union("third", "first")
    assert cs2.find("second") == ("first", True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=15))
def test_cluster_set_matches_connected_components(pairs: list[tuple[int, int]]) -> None:
    cs = ClusterSet()
    order: list[str] = []
    adj: dict[str, set[str]] = {}
    for a, b in pairs:
        sa, sb = f"n{a}", f"n{b}"
        cs.union(sa, sb)
        for s in (sa, sb):
            if s not in order:
                order.append(s)
        adj.setdefault(sa, set()).add(sb)
        adj.setdefault(sb, set()).add(sa)
    comps: dict[str, set[str]] = {}
    for s in order:
        if s in comps:
            continue
        stack, comp = [s], {s}
        while stack:
            for t in adj[stack.pop()]:
                if t not in comp:
                    comp.add(t)
                    stack.append(t)
        for t in comp:
            comps[t] = comp
    want: list[list[str]] = []
    for s in order:
        group = [t for t in order if t in comps[s]]
        if group[0] == s:
            want.append(group)
    assert cs.clusters() == want
    for s in order:
        assert cs.find(s) == ([t for t in order if t in comps[s]][0], True)


def test_signature_conversions() -> None:
    # int64 arrays (Spark LongType) are reinterpreted as two's complement.
    want = band_keys(np.array([1, 2**64 - 1], np.uint64), 1, 2).tolist()
    assert band_keys(np.array([1, -1], np.int64), 1, 2).tolist() == want
    assert band_keys([1, 2**64 - 1], 1, 2).tolist() == want
    assert band_keys_batch(np.array([[1, -1]], np.int64), 1, 2).tolist() == [want]
    with pytest.raises(ValueError, match="2\\*\\*64"):
        band_keys([-1, 2], 1, 2)
    with pytest.raises(ValueError, match="integers"):
        band_keys(np.array([1.0, 2.0]), 1, 2)
    with pytest.raises(ValueError, match="1-D"):
        Index(1, 2).add("x", np.zeros((1, 2), np.uint64))


def test_recall_params_put_threshold_plus_margin_above_the_target() -> None:
    from neardup_udfs.kernels.lsh import candidate_probability, recall_params

    assert recall_params(128, 0.7) == (25, 5)
    for k in (64, 128, 250):
        for t in (0.3, 0.5, 0.7, 0.8, 0.9, 0.97):
            bands, rows = recall_params(k, t)
            assert bands == k // rows
            j = t + min(0.05, (1 - t) / 2)
            assert candidate_probability(j, bands, rows) >= 0.995
            if rows < k:  # one more row would miss the target
                assert candidate_probability(j, k // (rows + 1), rows + 1) < 0.995
    assert recall_params(4, 0.1, probability=0.999999) == (4, 1)
    for bad, name in (({"k": 0}, "k"), ({"threshold": 1.0}, "threshold")):
        args = {"k": 128, "threshold": 0.7, **bad}
        with pytest.raises(ValueError, match=name):
            recall_params(**args)
    with pytest.raises(ValueError, match="probability"):
        recall_params(128, 0.7, probability=1.0)
    with pytest.raises(ValueError, match="margin"):
        recall_params(128, 0.7, margin=-0.1)
