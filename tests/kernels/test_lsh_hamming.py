"""semblance's lsh HammingIndex (kernels.lsh_hamming): goldens, orderings, and exactness
against brute force.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import CORPUS, ORDER, SIMHASH_W3

from neardup_udfs.kernels.lsh_hamming import HammingIndex
from neardup_udfs.kernels.lsh_index import Stats
from neardup_udfs.kernels.simhash import distance

u64 = st.integers(0, 2**64 - 1)


def test_hamming_index_d3_query_simhash_w3_golden() -> None:
    hx = HammingIndex(3)
    for id in ORDER:
        hx.add(id, SIMHASH_W3[id])
    want = CORPUS["hamming_index_d3_query_simhash_w3"]
    for id in ORDER:
        assert hx.query(SIMHASH_W3[id]) == want[id], id


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
