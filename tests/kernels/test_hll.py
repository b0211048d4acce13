"""semblance's HyperLogLog (kernels.hll): estimates bit for bit, the wire format, and its
properties.

Golden values come from tests/golden/generated-semblance.json (semblance 058e845, Go 1.25.5);
floats are compared through their IEEE-754 bits.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import PER_INPUT, PRIMS, float_bits, words_w1

from neardup_udfs.kernels.gomath import go_log
from neardup_udfs.kernels.hashing import SplitMix64
from neardup_udfs.kernels.hll import HyperLogLog

MASK64 = (1 << 64) - 1


u64 = st.integers(0, MASK64)


# --- hll: goldens ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(PRIMS["hll_estimates"]))
def test_hll_estimate_pins(key: str) -> None:
    match = re.fullmatch(r"p(\d+)_n(\d+)_splitmix\(seed=3n\+1\)", key)
    assert match, key
    p, n = int(match[1]), int(match[2])
    rng = SplitMix64(3 * n + 1)
    xs = [rng.next() for _ in range(n)]
    one_by_one, batched = HyperLogLog(p), HyperLogLog(p)
    for x in xs:
        one_by_one.add(x)
    batched.add_many(np.array(xs, dtype=np.uint64))
    assert one_by_one == batched
    assert float_bits(batched.estimate()) == PRIMS["hll_estimates"][key]["bits"]


def test_hll_marshal_golden() -> None:
    h = HyperLogLog(4)
    for x in (1, 2, 3):
        h.add(x)
    assert h.to_bytes().hex() == PRIMS["hll_p4_add_1_2_3_marshal_hex"]


@pytest.mark.parametrize("input_id", sorted(PER_INPUT))
def test_hll_per_input_words_w1(input_id: str) -> None:
    golden = PER_INPUT[input_id]
    xs = np.array(words_w1(input_id), dtype=np.uint64)
    p4, p14 = HyperLogLog(4), HyperLogLog(14)
    p4.add_many(xs)
    p14.add_many(xs)
    assert p4.to_bytes().hex() == golden["hll_p4_words_w1_marshal_hex"]
    assert float_bits(p4.estimate()) == golden["hll_p4_words_w1_estimate"]["bits"]
    assert float_bits(p14.estimate()) == golden["hll_p14_words_w1_estimate"]["bits"]


# --- hll: behaviour ---------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0, 3, 19, -1])
def test_hll_precision_out_of_range(p: int) -> None:
    with pytest.raises(ValueError, match=f"p={p}"):
        HyperLogLog(p)


def test_hll_merge_mismatch_reset_and_views() -> None:
    with pytest.raises(ValueError, match="precision"):
        HyperLogLog(10).merge(HyperLogLog(12))
    h = HyperLogLog(10)
    h.add(42)
    regs = h.registers
    assert regs.dtype == np.uint8 and len(regs) == 1024 and int(regs.max()) > 0
    with pytest.raises(ValueError):
        regs[0] = 1
    h.reset()
    assert h.estimate() == 0.0 and int(h.registers.max()) == 0
    # Negative ints are taken mod 2**64 (signed Spark longs), in add and add_many alike.
    a, b, c = HyperLogLog(8), HyperLogLog(8), HyperLogLog(8)
    a.add(-1)
    b.add(MASK64)
    c.add_many(np.array([-1], dtype=np.int64))
    assert a == b == c


def test_hll_wire_round_trip() -> None:
    rng = SplitMix64(9)
    h = HyperLogLog(10)
    h.add_many(np.array([rng.next() for _ in range(5000)], dtype=np.uint64))
    data = h.to_bytes()
    assert len(data) == 3 + 1024 and data[:3] == b"\x01\x03\x0a"
    back = HyperLogLog.from_bytes(data)
    assert back == h and back.p == 10 and back.estimate() == h.estimate()
    back.merge(h)
    back.add(1)  # the decoded sketch keeps working


GOOD4 = HyperLogLog(4).to_bytes()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "truncated"),
        (b"\x01\x03", "truncated"),
        (b"\x09" + GOOD4[1:], "version"),
        (b"\x01\x09" + GOOD4[2:], "algorithm id"),
        (b"\x01\x03\x63" + GOOD4[3:], "precision"),
        (b"\x01\x03\x03" + GOOD4[3:], "precision"),
        (b"\x01\x03\x13" + GOOD4[3:], "precision"),
        (GOOD4[:-1], "must be 19 bytes, got 18"),
        (GOOD4 + b"\x00", "must be 19 bytes, got 20"),
    ],
)
def test_hll_wire_errors(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HyperLogLog.from_bytes(data)


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 18), st.lists(u64, max_size=300), st.lists(u64, max_size=300))
def test_hll_add_many_and_merge_properties(p: int, xs: list[int], ys: list[int]) -> None:
    one, many = HyperLogLog(p), HyperLogLog(p)
    for x in xs:
        one.add(x)
    many.add_many(np.array(xs, dtype=np.uint64))
    assert one == many and one.estimate() == many.estimate()
    other, union = HyperLogLog(p), HyperLogLog(p)
    other.add_many(ys[::-1])  # any order, duplicates included
    union.add_many(np.array(ys + xs + xs, dtype=np.uint64))
    many.merge(other)
    assert many == union and many.estimate() == union.estimate()
    # The estimate is the sequential, register-order sum of 2**-reg (no reassociation).
    regs = [int(r) for r in union.registers]
    total = 0.0
    for r in regs:
        total += math.ldexp(1.0, -r)
    m, zeros = float(len(regs)), regs.count(0)
    alpha = {16: 0.673, 32: 0.697, 64: 0.709}.get(len(regs), 0.7213 / (1 + 1.079 / m))
    est = alpha * m * m / total
    want = est if est > 2.5 * m or zeros == 0 else m * go_log(m / zeros)
    assert float_bits(union.estimate()) == float_bits(want)
