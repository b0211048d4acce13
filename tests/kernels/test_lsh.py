"""semblance's lsh: band keys, the bands x rows for a threshold, candidate probability;
goldens and properties.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import ORDER, PER_INPUT, PRIMS, SIGS, semblance

from neardup_udfs.kernels.hashing import mix_fold
from neardup_udfs.kernels.lsh import (
    band_keys,
    band_keys_batch,
    candidate_probability,
    params,
    threshold,
)
from neardup_udfs.kernels.lsh_index import Index

u64 = st.integers(0, 2**64 - 1)


def _hex(keys: np.ndarray) -> list[str]:
    return [f"{k:016x}" for k in keys.tolist()]


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
    for pair in semblance()["pairs"]:
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
