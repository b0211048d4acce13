"""semblance's reservoir sample (kernels.sample): goldens and its uniformity.

Golden values come from tests/golden/generated-semblance.json (semblance 058e845, Go 1.25.5);
floats are compared through their IEEE-754 bits.
"""

from __future__ import annotations

from collections import Counter

import pytest
from semblance_golden import PRIMS

from neardup_udfs.kernels.sample import Reservoir

# --- sample ------------------------------------------------------------------------------------


def test_sample_goldens() -> None:
    r = Reservoir[str](3, seed=1)
    for i in range(10000):
        r.add(f"msg-{i:04d}")
    assert r.sample() == PRIMS["sample_example_k3_seed1_10000"] and r.n == 10000
    ints = Reservoir[int](5, seed=42)
    for i in range(1000):
        ints.add(i)
    assert ints.sample() == PRIMS["sample_k5_seed42_ints_0_999"]


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
