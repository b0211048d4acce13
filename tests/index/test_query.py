"""Index queries without Spark: prefix keys, and the ranking functions an index runs over the
candidates its key lookups find (``similar_ranked`` = semblance ``Forest.query``,
``near_ranked`` = ditto ``Index.Near``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.index.query import Similar, near_ranked, shared_prefix, similar_ranked
from neardup_udfs.index.store import seq_base
from neardup_udfs.kernels.hamming_index import Index, block_keys
from neardup_udfs.kernels.hashing import mix_fold
from neardup_udfs.kernels.lsh import band_keys, band_keys_batch, prefix_keys_batch
from neardup_udfs.kernels.lsh_forest import Forest

u64 = st.integers(0, 2**64 - 1)
# Values at the edges of the uint64 range (sign bit set, all ones) as well as random ones.
u64_edgy = st.one_of(
    u64, st.sampled_from([0, 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1])
)


def _seq(i: int) -> int:
    """The i-th document's seq as an index assigns it: batches of 7 documents."""
    return seq_base(1 + i // 7) + i % 7


# --- prefix keys ---------------------------------------------------------------------------------


@settings(max_examples=80)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 4), st.data())
def test_prefix_keys_are_mix_folds_of_band_prefixes(
    bands: int, rows: int, n: int, data: st.DataObject
) -> None:
    values = data.draw(st.lists(u64_edgy, min_size=n * bands * rows, max_size=n * bands * rows))
    sigs = np.array(values, dtype=np.uint64).reshape(n, bands * rows)
    keys = prefix_keys_batch(sigs, bands, rows)
    assert keys.dtype == np.uint64
    assert keys.shape == (n, bands, rows)
    assert np.array_equal(keys[:, :, rows - 1], band_keys_batch(sigs, bands, rows))
    for i in range(n):
        sig = [int(v) for v in sigs[i]]
        assert [int(k) for k in keys[i, :, rows - 1]] == band_keys(sigs[i], bands, rows).tolist()
        for b in range(bands):
            for d in range(1, rows + 1):
                assert int(keys[i, b, d - 1]) == mix_fold(sig[b * rows : b * rows + d])


def test_prefix_keys_large_values_and_signed_input() -> None:
    rng = np.random.default_rng(7)
    sigs = rng.integers(0, 2**64, size=(6, 4 * 3), dtype=np.uint64)
    sigs[0, :] = np.uint64(2**64 - 1)
    sigs[1, ::2] = np.uint64(2**63)
    assert (sigs >= np.uint64(2**63)).any()
    keys = prefix_keys_batch(sigs, 4, 3)
    for i in range(6):
        for b in range(4):
            for d in range(1, 4):
                want = mix_fold(int(v) for v in sigs[i, b * 3 : b * 3 + d])
                assert int(keys[i, b, d - 1]) == want
    # Spark hands signatures over as int64: the same bits give the same keys.
    assert np.array_equal(prefix_keys_batch(sigs.view(np.int64), 4, 3), keys)
    assert np.array_equal(keys[:, :, 2], band_keys_batch(sigs, 4, 3))


def test_prefix_keys_equal_exactly_when_prefixes_equal() -> None:
    sigs = np.array(
        [
            [1, 2, 3, 4, 5, 6],
            [1, 2, 9, 4, 5, 6],
            [1, 9, 3, 9, 5, 6],
        ],
        dtype=np.uint64,
    )
    keys = prefix_keys_batch(sigs, 2, 3)
    assert keys[0, 0, 0] == keys[1, 0, 0] == keys[2, 0, 0]
    assert keys[0, 0, 1] == keys[1, 0, 1] != keys[2, 0, 1]
    assert keys[0, 0, 2] != keys[1, 0, 2]
    assert np.array_equal(keys[0, 1], keys[1, 1])
    assert keys[0, 1, 0] != keys[2, 1, 0]
    # The depth-d key of a band depends on that band's values only, not its position.
    assert keys[0, 0, 0] == prefix_keys_batch(np.array([[1]], np.uint64), 1, 1)[0, 0, 0]


def test_prefix_keys_shapes_and_errors() -> None:
    assert prefix_keys_batch(np.zeros((0, 6), np.uint64), 2, 3).shape == (0, 2, 3)
    with pytest.raises(ValueError, match="bands\\*rows"):
        prefix_keys_batch(np.zeros((1, 5), np.uint64), 2, 3)
    with pytest.raises(ValueError, match="2-D"):
        prefix_keys_batch(np.zeros(6, np.uint64), 2, 3)
    with pytest.raises(ValueError, match="rows"):
        prefix_keys_batch(np.zeros((1, 6), np.uint64), 6, 0)


# --- shared_prefix -------------------------------------------------------------------------------


def test_shared_prefix_hand_made() -> None:
    query = np.array([1, 2, 3, 4, 5, 6], dtype=np.uint64)
    sigs = np.array(
        [
            [1, 2, 3, 4, 5, 6],  # equal
            [1, 2, 9, 4, 9, 6],  # a later equal value does not extend the prefix
            [9, 2, 3, 9, 5, 6],  # first values differ: nothing shared
            [1, 9, 3, 4, 5, 0],
            [3, 2, 1, 6, 5, 4],  # same values, other order
        ],
        dtype=np.uint64,
    )
    got = shared_prefix(query, sigs, 2, 3)
    assert got.dtype == np.int64
    assert got.tolist() == [[3, 3], [2, 1], [0, 0], [1, 2], [0, 0]]
    # Three trees of depth two over the same values.
    assert shared_prefix(query, sigs, 3, 2).tolist() == [
        [2, 2, 2],
        [2, 0, 0],
        [0, 1, 2],
        [1, 2, 1],
        [0, 0, 1],
    ]
    # One tree of depth six, and six trees of depth one.
    assert shared_prefix(query, sigs, 1, 6)[:, 0].tolist() == [6, 2, 0, 1, 0]
    assert shared_prefix(query, sigs, 6, 1).tolist() == (sigs == query).astype(int).tolist()


def test_shared_prefix_large_values_and_shapes() -> None:
    top = 2**64 - 1
    query = np.array([top, 2**63, 5, top], dtype=np.uint64)
    sigs = np.array([[top, 2**63, 5, 0], [top - 1, 2**63, 5, top]], dtype=np.uint64)
    assert shared_prefix(query, sigs, 1, 4).tolist() == [[3], [0]]
    assert shared_prefix(query, sigs, 2, 2).tolist() == [[2, 1], [0, 2]]
    # A single flat signature is one row; no signatures give an empty result.
    assert shared_prefix(query, sigs[0], 2, 2).tolist() == [[2, 1]]
    assert shared_prefix(query, np.zeros((0, 4), np.uint64), 2, 2).shape == (0, 2)


# --- similar_ranked = Forest.query over the index's candidates -----------------------------------


@dataclass
class Stored:
    """An index's documents, in insertion (seq) order."""

    trees: int
    depth: int
    ids: list[str]
    sigs: np.ndarray  # (m, trees*depth) uint64
    seqs: list[int]


@st.composite
def stored_and_query(draw: st.DrawFn) -> tuple[Stored, np.ndarray, int]:
    trees = draw(st.integers(1, 4))
    depth = draw(st.integers(1, 4))
    m = draw(st.integers(0, 60))
    width = trees * depth
    # A tiny alphabet makes shared prefixes (and so every depth of the walk) common.
    alphabet = draw(st.integers(2, 4))
    values = draw(st.lists(st.integers(0, alphabet - 1), min_size=m * width, max_size=m * width))
    # Some large values too: the same slots stand for 64-bit hash values.
    big = draw(st.booleans())
    sigs = np.array(values, dtype=np.uint64).reshape(m, width)
    if big:
        sigs = sigs + np.uint64(2**64 - 8)
    ids = draw(st.lists(st.sampled_from([f"d{j:02d}" for j in range(40)]), min_size=m, max_size=m))
    q = np.array(
        draw(st.lists(st.integers(0, alphabet - 1), min_size=width, max_size=width)),
        dtype=np.uint64,
    )
    if big:
        q = q + np.uint64(2**64 - 8)
    n = draw(st.integers(1, 10))
    return Stored(trees, depth, ids, sigs, [_seq(i) for i in range(m)]), q, n


def _forest(stored: Stored) -> Forest:
    forest = Forest(stored.trees, stored.depth)
    for i in np.argsort(stored.seqs, kind="stable"):
        forest.add(stored.ids[i], stored.sigs[i])
    return forest


def _naive_prefix(q: np.ndarray, sig: np.ndarray, trees: int, depth: int) -> int:
    """The longest prefix ``sig`` shares with ``q`` in any tree (loops, no numpy tricks)."""
    best = 0
    for t in range(trees):
        d = 0
        while d < depth and int(sig[t * depth + d]) == int(q[t * depth + d]):
            d += 1
        best = max(best, d)
    return best


def _lookup(stored: Stored, q: np.ndarray, level: int) -> list[int]:
    """The rows an index's key lookup at ``level`` finds: equal prefix keys in some band."""
    if not len(stored.ids):
        return []
    keys = prefix_keys_batch(stored.sigs, stored.trees, stored.depth)[:, :, level - 1]
    qkeys = prefix_keys_batch(q.reshape(1, -1), stored.trees, stored.depth)[0, :, level - 1]
    return [int(i) for i in np.flatnonzero((keys == qkeys).any(axis=1))]


def _walk(
    stored: Stored, q: np.ndarray, n: int, data: st.DataObject
) -> list[tuple[int, list[int], list[Similar] | None]]:
    """Run ``similar_ranked`` as the index does, from ``depth`` down to 1, at every level
    (not only until the first result): ``(level, candidate rows, result)``."""
    out = []
    for level in range(stored.depth, 0, -1):
        found = _lookup(stored, q, level)
        for i in found:
            assert _naive_prefix(q, stored.sigs[i], stored.trees, stored.depth) >= level
        # A few rows whose keys collide without sharing the prefix: harmless by design.
        others = [i for i in range(len(stored.ids)) if i not in found]
        collisions = data.draw(
            st.lists(st.sampled_from(others), max_size=4, unique=True) if others else st.just([])
        )
        rows = data.draw(st.permutations(found + collisions))  # lookups come back unordered
        result = similar_ranked(
            q,
            n,
            stored.trees,
            stored.depth,
            level,
            [stored.ids[i] for i in rows],
            stored.sigs[rows],
            [stored.seqs[i] for i in rows],
        )
        out.append((level, rows, result))
    return out


@settings(max_examples=300)
@given(stored_and_query(), st.data())
def test_similar_ranked_is_forest_query(
    case: tuple[Stored, np.ndarray, int], data: st.DataObject
) -> None:
    stored, q, n = case
    want = _forest(stored).query(q, n)
    walk = _walk(stored, q, n, data)
    settled = [(lvl, r) for lvl, _, r in walk if r is not None]
    assert settled, "level 1 always settles"
    assert walk[-1][0] == 1 and walk[-1][2] is not None
    first = settled[0][1]
    assert [s.id for s in first] == want
    assert [s.rank for s in first] == list(range(1, len(want) + 1))
    # Once settled, every lower level (more candidates) gives the same answer.
    for _, ranked in settled:
        assert [s.id for s in ranked] == want
    # None exactly when fewer than n distinct ids share `level` values.
    for lvl, _, result in walk:
        deep = {
            stored.ids[i]
            for i in range(len(stored.ids))
            if _naive_prefix(q, stored.sigs[i], stored.trees, stored.depth) >= lvl
        }
        assert (result is None) == (lvl > 1 and len(deep) < n)


def _met_first(stored: Stored, q: np.ndarray, doc: str) -> int:
    """The row of ``doc`` the Forest's walk meets first, by walking it naively: depth from
    deepest, tree by tree, entries sorted by (key, seq)."""
    order = sorted(range(len(stored.ids)), key=lambda i: stored.seqs[i])
    d, t = stored.depth, stored.trees
    for depth in range(d, 0, -1):
        for tree in range(t):
            lo, hi = tree * d, tree * d + depth
            hits = [i for i in order if list(stored.sigs[i, lo:hi]) == list(q[lo:hi])]
            hits.sort(
                key=lambda i: (
                    tuple(int(v) for v in stored.sigs[i, tree * d : (tree + 1) * d]),
                    stored.seqs[i],
                )
            )
            for i in hits:
                if stored.ids[i] == doc:
                    return i
    raise AssertionError(f"{doc} is never met")


@settings(max_examples=300)
@given(stored_and_query(), st.data())
def test_similar_ranked_jaccard_of_the_entry_met(
    case: tuple[Stored, np.ndarray, int], data: st.DataObject
) -> None:
    stored, q, n = case
    walk = _walk(stored, q, n, data)
    for level, _, result in walk:
        if result is None:
            continue
        for s in result:
            sig = stored.sigs[_met_first(stored, q, s.id)]
            want = sum(int(a) == int(b) for a, b in zip(sig, q, strict=True)) / len(q)
            assert s.jaccard == pytest.approx(want, abs=1e-12), (s.id, level)


def test_similar_ranked_hand_made() -> None:
    # trees=2, depth=2; query (1, 2 | 3, 4).
    q = np.array([1, 2, 3, 4], dtype=np.uint64)
    ids = ["a", "b", "c", "d"]
    sigs = np.array(
        [
            [1, 2, 0, 0],  # shares 2 in tree 0
            [0, 0, 3, 4],  # shares 2 in tree 1
            [1, 0, 3, 0],  # shares 1 in both
            [0, 0, 0, 0],  # shares nothing
        ],
        dtype=np.uint64,
    )
    seqs = [_seq(i) for i in range(4)]
    # Two documents share 2 values: n=2 settles at level 2, n=3 does not.
    deep = [0, 1]
    two = similar_ranked(q, 2, 2, 2, 2, [ids[i] for i in deep], sigs[deep], [seqs[i] for i in deep])
    assert two == [Similar(1, "a", 0.5), Similar(2, "b", 0.5)]
    assert similar_ranked(q, 3, 2, 2, 2, [ids[i] for i in deep], sigs[deep], deep) is None
    three = similar_ranked(q, 3, 2, 2, 1, ids, sigs, seqs)
    assert three == [Similar(1, "a", 0.5), Similar(2, "b", 0.5), Similar(3, "c", 0.5)]
    # "d" shares no first value: never a result, even when asked for more.
    assert [s.id for s in similar_ranked(q, 10, 2, 2, 1, ids, sigs, seqs) or []] == [
        "a",
        "b",
        "c",
    ]
    assert _forest(Stored(2, 2, ids, sigs, seqs)).query(q, 10) == ["a", "b", "c"]
    # Nothing found at level 1: an empty, settled answer.
    assert similar_ranked(q, 1, 2, 2, 1, [], np.zeros((0, 4), np.uint64), []) == []


def test_similar_ranked_repeated_id_reports_the_entry_met() -> None:
    """An id stored twice: its first entry shares one value with the query, its second the
    whole key. The walk meets it through the second at depth 4, so it reports that entry's
    Jaccard whichever level settles the query (whichever entries the lookups found)."""
    q = np.array([1, 2, 3, 4], dtype=np.uint64)
    ids = ["a", "a", "b"]
    sigs = np.array([[1, 9, 9, 9], [1, 2, 3, 4], [1, 8, 8, 8]], dtype=np.uint64)
    seqs = [_seq(0), _seq(1), _seq(2)]
    stored = Stored(1, 4, ids, sigs, seqs)
    assert _forest(stored).query(q, 1) == ["a"]
    assert _forest(stored).query(q, 2) == ["a", "b"]
    # n=2 settles at level 1, whose lookup finds every entry.
    two = similar_ranked(q, 2, 1, 4, 1, ids, sigs, seqs)
    assert two == [Similar(1, "a", 1.0), Similar(2, "b", 0.25)]
    # n=1 settles at level 4, whose lookup finds only the second entry of "a".
    assert _lookup(stored, q, 4) == [1]
    one = similar_ranked(q, 1, 1, 4, 4, ids[1:2], sigs[1:2], seqs[1:2])
    assert one == [Similar(1, "a", 1.0)]


# --- near_ranked = Index.near over the index's candidates ----------------------------------------


def _signed(v: int) -> int:
    """A uint64 as Spark's LongType stores it."""
    return v - (1 << 64) if v >= 1 << 63 else v


@settings(max_examples=200)
@given(
    st.integers(0, 8),
    u64_edgy,
    st.lists(u64, max_size=20),
    st.integers(0, 30),
    st.data(),
)
def test_near_ranked_is_index_near(
    index_k: int, q: int, far: list[int], near_count: int, data: st.DataObject
) -> None:
    fps = list(far)
    for _ in range(near_count):
        bits = data.draw(st.lists(st.integers(0, 63), max_size=index_k + 2, unique=True))
        fps.append(q ^ sum(1 << b for b in bits))
    order = data.draw(st.permutations(range(len(fps))))
    fps = [fps[i] for i in order]
    ids = data.draw(
        st.lists(
            st.sampled_from(["a", "b", "c", "é", "Z", "aa", "doc-1", "doc-10", "doc-2"]),
            min_size=len(fps),
            max_size=len(fps),
        )
    )
    seqs = [_seq(i) for i in range(len(fps))]
    full = Index(index_k)
    for id, fp in zip(ids, fps, strict=True):
        full.add(id, fp)

    # What the index's block lookup finds, and a superset with far-away fingerprints.
    blocks = block_keys(np.array(fps, dtype=np.uint64), index_k)
    qblocks = block_keys(np.array([q], dtype=np.uint64), index_k)[0]
    found = [int(i) for i in np.flatnonzero((blocks == qblocks).any(axis=1))]
    everything = list(range(len(fps)))
    for rows in (found, everything):
        rows = data.draw(st.permutations(rows))  # lookups come back unordered
        for k in (-1, 0, index_k - 1, index_k, index_k + 1, index_k + 5, 64):
            want = full.near(q, k)
            got = near_ranked(
                q,
                k,
                index_k,
                [ids[i] for i in rows],
                [fps[i] for i in rows],
                [seqs[i] for i in rows],
            )
            assert got == want, (k, index_k)
            # Parquet stores fingerprints as int64: the same bits give the same answer.
            signed = near_ranked(
                _signed(q),
                k,
                index_k,
                [ids[i] for i in rows],
                [_signed(fps[i]) for i in rows],
                [seqs[i] for i in rows],
            )
            assert signed == want
            assert all(m.distance <= min(k, index_k) for m in got)


def test_near_ranked_hand_made() -> None:
    q = 0xFFFF_0000_FFFF_0000
    ids = ["b", "a", "c", "far", "a"]
    fps = [q ^ 0b1, q ^ 0b1, q ^ 0b111, ~q & (2**64 - 1), q]
    seqs = [_seq(i) for i in range(len(ids))]
    got = near_ranked(q, 3, 3, ids, fps, seqs)
    assert [(m.distance, m.id) for m in got] == [(0, "a"), (1, "a"), (1, "b"), (3, "c")]
    # k above the index's k is clamped down to it.
    assert near_ranked(q, 10, 2, ids, fps, seqs) == near_ranked(q, 2, 2, ids, fps, seqs)
    assert [m.id for m in near_ranked(q, 10, 2, ids, fps, seqs)] == ["a", "a", "b"]
    assert near_ranked(q, -1, 3, ids, fps, seqs) == []
    assert near_ranked(q, 3, 3, [], [], []) == []
