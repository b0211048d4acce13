"""semblance's streaming statistics: hll, topk (SpaceSaving) and sample (reservoir).

Golden values come from tests/golden/generated-semblance.json (semblance 058e845, Go 1.25.5);
floats are compared through their IEEE-754 bits.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.gomath import go_log
from neardup_udfs.kernels.hashing import SplitMix64, mix64, mix64_array
from neardup_udfs.kernels.hll import HyperLogLog
from neardup_udfs.kernels.sample import Reservoir
from neardup_udfs.kernels.topk import SpaceSaving

GOLDEN: dict[str, Any] = json.loads(
    (Path(__file__).parent / "golden" / "generated-semblance.json").read_text()
)
PRIM: dict[str, Any] = GOLDEN["primitives"]
PER_INPUT: dict[str, Any] = GOLDEN["per_input"]
TEXTS = {i["id"]: bytes.fromhex(i["hex"]) for i in GOLDEN["inputs"]}
MASK64 = (1 << 64) - 1
u64 = st.integers(0, MASK64)


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def check_summary(values: list[int], summary: dict[str, Any]) -> None:
    """A long sequence against the golden's {count, sha256_of_hex_lines, first_10, last_3}."""
    hexes = [f"{v:016x}" for v in values]
    assert len(hexes) == summary["count"]
    assert hexes[:10] == summary["first_10"] and hexes[-3:] == summary["last_3"]
    digest = hashlib.sha256("".join(h + "\n" for h in hexes).encode()).hexdigest()
    assert digest == summary["sha256_of_hex_lines"]


def words_w1(input_id: str) -> list[int]:
    """semblance Words(text, 1): the golden list, or the shingle kernel when it is summarised."""
    golden = PER_INPUT[input_id]["words_w1_shingles"]
    if isinstance(golden, list):
        return [int(h, 16) for h in golden]
    from neardup_udfs.kernels.shingle import word_shingles  # the Words port (shingle kernel)

    values = [int(v) & MASK64 for v in word_shingles(TEXTS[input_id], 1)]
    check_summary(values, golden)
    return values


# --- SplitMix64 / Mix64 (the generators hll and sample rely on) ------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, MASK64])
def test_splitmix64_streams(seed: int) -> None:
    rng = SplitMix64(seed)
    assert [f"{rng.next():016x}" for _ in range(8)] == PRIM[f"splitmix64_seed_{seed}_first8"]


def test_mix64_golden_and_vectorised() -> None:
    assert [f"{mix64(x):016x}" for x in (0, 1, 42)] == PRIM["mix64_of_0_1_42"]
    xs = [0, 1, 42, MASK64, 1 << 63, 0x9E3779B97F4A7C15]
    got = mix64_array(np.array(xs, dtype=np.uint64))
    assert [int(v) for v in got] == [mix64(x) for x in xs]


# --- hll: goldens ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(PRIM["hll_estimates"]))
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
    assert bits(batched.estimate()) == PRIM["hll_estimates"][key]["bits"]


def test_hll_marshal_golden() -> None:
    h = HyperLogLog(4)
    for x in (1, 2, 3):
        h.add(x)
    assert h.to_bytes().hex() == PRIM["hll_p4_add_1_2_3_marshal_hex"]


@pytest.mark.parametrize("input_id", sorted(PER_INPUT))
def test_hll_per_input_words_w1(input_id: str) -> None:
    golden = PER_INPUT[input_id]
    xs = np.array(words_w1(input_id), dtype=np.uint64)
    p4, p14 = HyperLogLog(4), HyperLogLog(14)
    p4.add_many(xs)
    p14.add_many(xs)
    assert p4.to_bytes().hex() == golden["hll_p4_words_w1_marshal_hex"]
    assert bits(p4.estimate()) == golden["hll_p4_words_w1_estimate"]["bits"]
    assert bits(p14.estimate()) == golden["hll_p14_words_w1_estimate"]["bits"]


def test_go_log_is_needed_and_close_to_libm() -> None:
    # "fox" leaves 10 of 16 p=4 registers empty: linear counting takes ln(1.6), where
    # CPython's libm log is 1 ulp away from Go's and the golden follows Go.
    assert PER_INPUT["fox"]["hll_p4_words_w1_estimate"]["bits"] == bits(16 * go_log(1.6))
    assert 16 * math.log(1.6) != 16 * go_log(1.6)
    for x in np.random.default_rng(5).uniform(1e-3, 1e6, 2000):
        assert abs(go_log(float(x)) - math.log(x)) <= math.ulp(math.log(x))
    assert go_log(1.0) == 0.0 and go_log(0.0) == -math.inf and math.isnan(go_log(-1.0))
    assert go_log(math.inf) == math.inf and math.isnan(go_log(math.nan))


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
    assert bits(union.estimate()) == bits(want)


# --- topk -------------------------------------------------------------------------------------

SUBJECTS = [
    "MAKE MONEY FAST", "meeting minutes", "MAKE MONEY FAST", "lunch?",
    "MAKE MONEY FAST", "re: patch review", "MAKE MONEY FAST", "weekend plans",
    "MAKE MONEY FAST", "MAKE MONEY FAST", "build broken", "MAKE MONEY FAST",
]  # fmt: skip


def test_topk_example_golden() -> None:
    s = SpaceSaving[str](3)
    for subject in SUBJECTS:
        s.add(subject)
    got = [f"{item}|count={c}|err={e}" for item, c, e in s.top(3)]
    assert got == PRIM["topk_example_cap3_top3"]
    item, count, err = s.top(1)[0]
    assert (item, count - err) == ("MAKE MONEY FAST", 7)


def test_topk_long_text_words_golden() -> None:
    s = SpaceSaving[int](10)
    for h in words_w1("long_text"):
        s.add(h)
    got = [f"{item:016x} count={c} err={e}" for item, c, e in s.top(10)]
    assert got == PRIM["topk_cap10_over_long_text_words_w1_hashes"]


def test_topk_reference_cases() -> None:
    s = SpaceSaving[str](8)
    for w in "a b c a b a".split():
        s.add(w)
    assert s.top(10) == [("a", 3, 0), ("b", 2, 0), ("c", 1, 0)]
    assert s.count("never") == (0, 0) and s.n == 6 and len(s) == 3
    s = SpaceSaving[str](2)
    for w in "a a b c".split():
        s.add(w)
    assert s.top(2) == [("a", 2, 0), ("c", 2, 1)] and s.count("b") == (2, 2)
    t = SpaceSaving[int](4)
    t.add(7, 1000)
    t.add(8, 0)
    t.add(9)
    assert t.top(1) == [(7, 1000, 0)] and t.n == 1001 and len(t) == 2
    for bad in (lambda: SpaceSaving[int](0), lambda: t.top(0), lambda: t.add(1, -1)):
        with pytest.raises(ValueError):
            bad()
    t.reset()
    assert t.n == 0 and len(t) == 0 and t.top(3) == []


def test_topk_merge_follows_heap_array_order() -> None:
    # After a,b,c,d then a again, the heap array is [b, d, c, a] (a sank past b, then d), so
    # merge ranks the count-1 candidates b, d, c (not adoption order b, c, d) and drops c.
    s = SpaceSaving[str](4)
    for w in "a b c d a".split():
        s.add(w)
    other = SpaceSaving[str](4)
    other.add("x")
    s.merge(other)
    assert s.top(4) == [("a", 2, 0), ("x", 2, 1), ("b", 1, 0), ("d", 1, 0)]
    assert s.count("c") == (1, 1) and s.n == 6
    assert other.top(4) == [("x", 1, 0)] and other.n == 1  # unchanged
    s.merge(s)  # self-merge doubles, like semblance
    assert s.top(2) == [("a", 4, 0), ("x", 4, 2)] and s.n == 12


def true_counts(stream: list[tuple[int, int]]) -> Counter[int]:
    counts: Counter[int] = Counter()
    for item, w in stream:
        counts[item] += w
    return counts


def assert_bounds(s: SpaceSaving[int], truth: Counter[int], universe: range) -> None:
    n, cap = s.n, s.capacity
    assert n == sum(truth.values())
    tracked = {item for item, _, _ in s.top(cap)}
    for item in universe:
        count, err = s.count(item)
        assert count - err <= truth[item] <= count
        if item in tracked:
            assert err * cap <= n
        elif truth[item] * cap > n:
            pytest.fail(f"heavy item {item} ({truth[item]} of {n}) is not tracked")


def assert_heap(s: SpaceSaving[int]) -> None:
    heap = s._heap
    for i in range(1, len(heap)):
        assert heap[(i - 1) // 2].key() < heap[i].key()
    assert {c.item: i for i, c in enumerate(heap)} == s._pos


skewed = st.lists(
    st.tuples(st.integers(0, 30).map(lambda v: v * v // 31), st.integers(0, 4)), max_size=200
)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8), skewed, st.integers(1, 8), skewed)
def test_topk_guarantees_on_random_streams(
    cap_a: int, stream_a: list[tuple[int, int]], cap_b: int, stream_b: list[tuple[int, int]]
) -> None:
    a, b = SpaceSaving[int](cap_a), SpaceSaving[int](cap_b)
    for item, w in stream_a:
        a.add(item, w)
    for item, w in stream_b:
        b.add(item, w)
    for s, stream in ((a, stream_a), (b, stream_b)):
        assert_heap(s)
        assert_bounds(s, true_counts(stream), range(31))
        assert len(s) <= s.capacity
    top = a.top(cap_a)
    assert top == sorted(top, key=lambda e: -e[1])
    a.merge(b)
    assert_heap(a)
    truth = true_counts(stream_a + stream_b)
    assert a.n == sum(truth.values()) and len(a) <= cap_a
    # Merge keeps the bounds of tracked items only: an item that neither sketch kept can
    # report (0, 0) when the merged sketch is below capacity (semblance behaves the same).
    for item, count, err in a.top(cap_a):
        assert count - err <= truth[item] <= count


# --- sample ------------------------------------------------------------------------------------


def test_sample_goldens() -> None:
    r = Reservoir[str](3, seed=1)
    for i in range(10000):
        r.add(f"msg-{i:04d}")
    assert r.sample() == PRIM["sample_example_k3_seed1_10000"] and r.n == 10000
    ints = Reservoir[int](5, seed=42)
    for i in range(1000):
        ints.add(i)
    assert ints.sample() == PRIM["sample_k5_seed42_ints_0_999"]


def test_sample_fill_reset_and_mid_stream_reads() -> None:
    r = Reservoir[int](5, seed=7)
    for i in range(3):
        r.add(i)
    assert r.sample() == [0, 1, 2] and len(r) == 3 and r.n == 3
    for i in range(3, 500):
        r.add(i)
        if i == 100:
            mid = r.sample()
            assert len(mid) == 5
    first = r.sample()
    r.reset()
    assert r.sample() == [] and r.n == 0
    for i in range(500):
        r.add(i)
    assert r.sample() == first  # reset restarts the generator: identical replay
    with pytest.raises(ValueError):
        Reservoir[int](0, seed=1)


def test_sample_is_uniform_over_seeds() -> None:
    hits: Counter[int] = Counter()
    for seed in range(2000):
        r = Reservoir[int](2, seed=seed)
        for i in range(20):
            r.add(i)
        hits.update(r.sample())
    assert sum(hits.values()) == 4000
    assert all(145 <= hits[i] <= 255 for i in range(20)), hits  # expected 200 each
