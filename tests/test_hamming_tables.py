"""``kernels.hamming_tables``: multi-table keys miss no pair within k, and k + 1 blocks are
ditto's block index."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.hamming_index import block_keys
from neardup_udfs.kernels.hamming_tables import MAX_TABLES, Scheme, default_blocks

RNG = np.random.default_rng(20261202)


def _flip(fp: int, bits: list[int]) -> int:
    for b in bits:
        fp ^= 1 << int(b)
    return fp


@pytest.mark.parametrize("k", range(0, 12))
def test_k_plus_one_blocks_are_dittos_block_keys(k: int) -> None:
    fps = RNG.integers(0, 2**63, size=200, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    assert np.array_equal(Scheme(k + 1, k).keys(fps), block_keys(fps, k))


@settings(max_examples=300, deadline=None)
@given(
    fp=st.integers(0, 2**64 - 1),
    k=st.integers(0, 6),
    extra=st.integers(0, 4),
    data=st.data(),
)
def test_no_pair_within_k_is_missed(fp: int, k: int, extra: int, data: st.DataObject) -> None:
    blocks = min(k + 1 + extra, 64)
    scheme = Scheme(blocks, k)
    if scheme.tables > 300:
        return
    n = data.draw(st.integers(0, k))
    bits = data.draw(st.lists(st.integers(0, 63), min_size=n, max_size=n, unique=True))
    keys = scheme.keys(np.array([fp, _flip(fp, bits)], dtype=np.uint64))
    assert (keys[0] == keys[1]).any(), (blocks, k, bits)


def test_default_scheme_for_k_3_is_20_tables_of_31_to_33_bits() -> None:
    scheme = Scheme(default_blocks(3), 3)
    assert scheme.describe() == {
        "blocks": 6,
        "tables": 20,
        "key_bits": [31, 33],
        "scheme": "multi-table",
    }
    for k in range(64):
        assert Scheme(default_blocks(k), k).tables <= max(MAX_TABLES, k + 1)


def test_candidates_of_both_schemes_hold_the_same_near_pairs() -> None:
    """On fingerprints crowded into few ditto buckets (the short-document case), the
    default scheme finds every pair ditto's finds within k, with far fewer candidates."""
    rng = np.random.default_rng(7)
    crowded = rng.integers(0, 8, size=80, dtype=np.uint64)  # the low 21 bits: 8 values
    high = rng.integers(0, 2**43, size=80, dtype=np.uint64) << np.uint64(21)
    low = (crowded * np.uint64(0x9E3779B9)) & np.uint64(2**21 - 1)
    fps = [int(h | c) for h, c in zip(high, low, strict=True)]
    fps += [
        _flip(fp, list(rng.choice(64, size=int(rng.integers(0, 4)), replace=False))) for fp in fps
    ]
    arr = np.array(fps, dtype=np.uint64)

    def found(scheme: Scheme) -> tuple[set[tuple[int, int]], int]:
        """The pairs within k among the distinct candidates, and how many candidates."""
        keys, candidates = scheme.keys(arr), set()
        for t in range(scheme.tables):
            buckets: dict[int, list[int]] = {}
            for i, key in enumerate(keys[:, t].tolist()):
                buckets.setdefault(key, []).append(i)
            for ids in buckets.values():
                candidates.update(itertools.combinations(ids, 2))
        near = {(a, b) for a, b in candidates if bin(int(arr[a]) ^ int(arr[b])).count("1") <= 3}
        return near, len(candidates)

    within = {
        (a, b)
        for a in range(len(arr))
        for b in range(a + 1, len(arr))
        if bin(int(arr[a]) ^ int(arr[b])).count("1") <= 3
    }
    ditto, ditto_candidates = found(Scheme(4, 3))
    multi, multi_candidates = found(Scheme(default_blocks(3), 3))
    assert ditto == multi == within and within
    assert multi_candidates * 5 < ditto_candidates


@pytest.mark.parametrize(
    ("blocks", "k", "message"),
    [(3, 3, r"\[4, 64\]"), (65, 3, r"\[4, 64\]"), (40, 20, "tables"), (4, 64, "k must be")],
)
def test_a_scheme_that_cannot_work_is_refused(blocks: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Scheme(blocks, k)
