"""semblance's SplitMix64 and Mix64 (kernels.hashing): the generators hll and sample
rely on.

Golden values come from tests/golden/generated-semblance.json (semblance 058e845, Go 1.25.5);
floats are compared through their IEEE-754 bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import PRIMS

from neardup_udfs.kernels.hashing import SplitMix64, fnv1a64, fnv1a64_spans, mix64, mix64_array

MASK64 = (1 << 64) - 1


# --- SplitMix64 / Mix64 (the generators hll and sample rely on) ------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, MASK64])
def test_splitmix64_streams(seed: int) -> None:
    rng = SplitMix64(seed)
    assert [f"{rng.next():016x}" for _ in range(8)] == PRIMS[f"splitmix64_seed_{seed}_first8"]


def test_mix64_golden_and_vectorised() -> None:
    assert [f"{mix64(x):016x}" for x in (0, 1, 42)] == PRIMS["mix64_of_0_1_42"]
    xs = [0, 1, 42, MASK64, 1 << 63, 0x9E3779B97F4A7C15]
    got = mix64_array(np.array(xs, dtype=np.uint64))
    assert [int(v) for v in got] == [mix64(x) for x in xs]


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(0, 299), st.integers(0, 70)), max_size=50),
)
def test_fnv_spans_equal_scalar(buf: bytes, raw: list[tuple[int, int]]) -> None:
    spans = [(s, min(n, len(buf) - s)) for s, n in raw if s <= len(buf)]
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    got = fnv1a64_spans(np.frombuffer(buf, dtype=np.uint8), starts, lengths)
    assert [int(h) for h in got] == [fnv1a64(buf[s : s + n]) for s, n in spans]


def test_fnv_spans_longer_than_sort_key() -> None:
    buf = bytes(range(256)) * 600  # spans longer than 65535 bytes take the long-span path
    starts = np.array([0, 5, 7, 1], dtype=np.int64)
    lengths = np.array([70000, 66000, 3, 0], dtype=np.int64)
    got = fnv1a64_spans(np.frombuffer(buf, dtype=np.uint8), starts, lengths)
    assert [int(h) for h in got] == [
        fnv1a64(buf[s : s + n]) for s, n in zip(starts, lengths, strict=True)
    ]
