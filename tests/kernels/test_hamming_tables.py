"""``kernels.hamming_tables``: multi-table keys miss no pair within k, and k + 1 blocks are
ditto's block index."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.hamming_index import block_keys
from neardup_udfs.kernels.hamming_tables import (
    MAX_TABLES,
    SAMPLED_KEY_BITS,
    SampledScheme,
    Scheme,
    default_blocks,
    image_scheme,
    sampled_key_bits,
)

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
        "guaranteed": True,
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


def test_sampled_positions_are_fixed_distinct_and_packed_as_runs() -> None:
    scheme = SampledScheme(MAX_TABLES, 16, 10)
    # fixed for ever: an image run's keys never change with a library's random stream
    assert scheme.positions[0] == [1, 7, 14, 21, 26, 30, 31, 32, 33, 34, 37, 40, 42, 43, 46, 51]
    assert SampledScheme(MAX_TABLES, 12, 10).positions[0] == [
        1, 7, 26, 30, 31, 33, 34, 37, 40, 42, 43, 46
    ]  # fmt: skip
    assert len({tuple(p) for p in scheme.positions}) == MAX_TABLES
    for positions, table in zip(scheme.positions, scheme.parts, strict=True):
        assert len(set(positions)) == 16 and all(0 <= p < 64 for p in positions)
        assert sum(w for _, w, _ in table) == 16  # runs of adjacent bits, packed low first
        assert [o for _, _, o in table] == list(
            itertools.accumulate([0] + [w for _, w, _ in table[:-1]])
        )


@settings(max_examples=200, deadline=None)
@given(fp=st.integers(0, 2**64 - 1), bits=st.sets(st.integers(0, 63), max_size=12))
def test_a_sampled_table_matches_exactly_when_its_bits_agree(fp: int, bits: set[int]) -> None:
    scheme = SampledScheme(MAX_TABLES, 16, 10)
    keys = scheme.keys(np.array([fp, _flip(fp, sorted(bits))], dtype=np.uint64))
    for t, positions in enumerate(scheme.positions):
        assert bool(keys[0, t] == keys[1, t]) == (not bits & set(positions)), t
        assert int(keys[0, t]) < 2**16


def test_image_scheme_is_bounded_and_guaranteed_where_it_can_be() -> None:
    for k in range(64):
        scheme = image_scheme(k)
        assert scheme.tables <= MAX_TABLES, k
        if isinstance(scheme, Scheme):  # guaranteed only with keys as long as sampled ones
            assert scheme.key_bits[0] >= min(SAMPLED_KEY_BITS, 64 - k)
    assert isinstance(image_scheme(3), Scheme) and image_scheme(3).blocks == 6
    sampled = image_scheme(10)  # pHash's k: 11 blocks of 5-6 bits would be the guarantee
    assert isinstance(sampled, SampledScheme)
    assert (sampled.tables, sampled.key_bits) == (MAX_TABLES, SAMPLED_KEY_BITS)
    assert sampled.describe() == {
        "tables": 20,
        "key_bits": [12, 12],
        "scheme": "sampled bits",
        "guaranteed": False,
        "model_recall_at_k": 0.8899,
    }
    assert image_scheme(10, blocks=11) == Scheme(11, 10)  # the guarantee, when asked
    assert image_scheme(10, key_bits=12) == SampledScheme(MAX_TABLES, 12, 10)
    # the model: certain at distance 0, falling with distance
    assert sampled.model_recall(0) == 1.0
    assert sampled.model_recall(4) > sampled.model_recall(10) > sampled.model_recall(20)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"blocks": 11, "key_bits": 16}, "exclude each other"),
        ({"key_bits": 55}, r"\[1, 54\]"),
        ({"key_bits": 0}, r"\[1, 54\]"),
        ({"blocks": 5}, r"\[11, 64\]"),
    ],
)
def test_an_image_scheme_that_cannot_work_is_refused(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        image_scheme(10, **kwargs)


def test_sampled_keys_find_most_near_pairs_among_few_candidates() -> None:
    """Random 64-bit fingerprints with planted neighbours at 1..10 bits: the sampled
    scheme finds the planted pairs near the model's rate, and far fewer chance candidates
    than the guaranteed 11 blocks of 5-6 bits."""
    rng = np.random.default_rng(11)
    base = rng.integers(0, 2**63, size=3000, dtype=np.uint64) * np.uint64(2)
    dist = rng.integers(1, 11, size=len(base))
    near = np.array(
        [_flip(int(fp), list(rng.choice(64, size=int(d), replace=False)))
         for fp, d in zip(base, dist, strict=True)], dtype=np.uint64,
    )  # fmt: skip
    fps = np.concatenate([base, near])

    def collide(scheme: SampledScheme | Scheme) -> tuple[np.ndarray, int]:
        keys = scheme.keys(fps)
        n = len(base)
        hit = (keys[:n] == keys[n:]).any(axis=1)
        chance = sum(
            int(c * (c - 1) // 2)
            for t in range(scheme.tables)
            for c in np.unique(keys[:, t], return_counts=True)[1]
        )
        return hit, chance

    sampled, sampled_chance = collide(image_scheme(10))
    blocks, blocks_chance = collide(Scheme(11, 10))
    assert blocks.all()  # the guarantee
    model = np.mean([image_scheme(10).model_recall(int(d)) for d in dist])
    assert abs(sampled.mean() - model) < 0.03, (sampled.mean(), model)
    assert sampled_chance * 20 < blocks_chance


def test_sampled_keys_lengthen_as_the_collection_grows() -> None:
    """Chance candidates of uniform fingerprints stay at most one per image: the key grows
    by a bit each time the collection doubles, from 12 bits, up to 64 - k."""
    assert [sampled_key_bits(n, 10) for n in (None, 1, 40, 409, 410, 5_000, 50_000)] == [
        12, 12, 12, 12, 13, 16, 19
    ]  # fmt: skip
    assert sampled_key_bits(10**15, 10) == 54 and sampled_key_bits(10**15, 60) == 4
    for n in (1000, 12_345, 10**6, 10**8):  # above the 12-bit floor: the fewest bits
        bits = sampled_key_bits(n, 10)
        assert n * n / 2 * MAX_TABLES / 2**bits <= n < n * n / 2 * MAX_TABLES / 2 ** (bits - 1)
    scheme = image_scheme(10, images=50_000)
    assert isinstance(scheme, SampledScheme) and scheme.key_bits == 19
    assert image_scheme(10, key_bits=12, images=50_000).key_bits == 12  # a choice stands
    assert image_scheme(3, images=10**9) == Scheme(6, 3)  # 31-33 bits: still guaranteed
