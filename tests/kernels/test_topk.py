"""semblance's SpaceSaving top-k (kernels.topk): goldens and its guarantees on random
streams.

Golden values come from tests/golden/generated-semblance.json (semblance 058e845, Go 1.25.5);
floats are compared through their IEEE-754 bits.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import PRIMS, words_w1

from neardup_udfs.kernels.topk import SpaceSaving

MASK64 = (1 << 64) - 1


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
    assert got == PRIMS["topk_example_cap3_top3"]
    item, count, err = s.top(1)[0]
    assert (item, count - err) == ("MAKE MONEY FAST", 7)


def test_topk_long_text_words_golden() -> None:
    s = SpaceSaving[int](10)
    for h in words_w1("long_text"):
        s.add(h)
    got = [f"{item:016x} count={c} err={e}" for item, c, e in s.top(10)]
    assert got == PRIMS["topk_cap10_over_long_text_words_w1_hashes"]


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
