"""The compiled SimHash pieces (kernels.simhash_jit): FNV-1a and Charikar's majority vote."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.hashing import fnv1a64
from neardup_udfs.kernels.simhash_jit import FNV_OFFSET, add_votes, fnv1a_span, majority_bits


@given(st.lists(st.binary(max_size=12), max_size=7))
def test_compiled_simhash_pieces_equal_fnv1a_and_charikar(features: list[bytes]) -> None:
    hashes = [fnv1a64(f) for f in features]
    counts = np.zeros(64, dtype=np.int64)
    for f, h in zip(features, hashes, strict=True):
        assert fnv1a_span(FNV_OFFSET, np.frombuffer(f, dtype=np.uint8), 0, len(f)) == h
        add_votes(counts, np.uint64(h))
    want = sum(1 << i for i in range(64) if 2 * sum(h >> i & 1 for h in hashes) > len(hashes))
    assert majority_bits(counts, len(hashes)) == want
