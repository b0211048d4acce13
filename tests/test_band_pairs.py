"""``kernels.band_pairs``: every pair a band produces, once, at its first producing band."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.band_pairs import HOT, HUB, NOT_HOT, first_band_pairs
from neardup_udfs.kernels.lsh import band_keys


def _buckets(sigs: np.ndarray, bands: int, rows: int) -> dict[tuple[int, int], list[int]]:
    out: dict[tuple[int, int], list[int]] = defaultdict(list)
    for d, sig in enumerate(sigs):
        for b, key in enumerate(band_keys(sig, bands, rows).tolist()):
            out[(b, key)].append(d)
    return {k: v for k, v in out.items() if len(v) > 1}


def _oracle(sigs: np.ndarray, bands: int, rows: int, hot: int) -> set[tuple[int, int, int, int]]:
    """Every pair some bucket produces (all pairs, or the hub's when hot), with its first
    producing band and equal slots: the candidates rule written naively."""
    first: dict[tuple[int, int], int] = {}
    for (band, _), ids in _buckets(sigs, bands, rows).items():
        if len(ids) > hot:
            pairs = [(min(ids), d) for d in ids if d != min(ids)]
        else:
            pairs = [(x, y) for i, x in enumerate(ids) for y in ids[i + 1 :]]
        for pair in pairs:
            first[pair] = min(first.get(pair, band), band)
    return {(a, b, c, int(np.sum(sigs[a] == sigs[b]))) for (a, b), c in first.items()}


def _kernel_input(sigs: np.ndarray, bands: int, rows: int, hot: int, chunk: int):  # type: ignore[no-untyped-def]
    """The buckets as the Spark stage hands them over: hot ones cut into chunks of at most
    ``chunk`` members, the hub in each; every member row with its document's roles."""
    roles = np.full((len(sigs), bands), NOT_HOT, dtype=np.int8)
    groups: list[tuple[int, bool, list[int]]] = []
    for (band, _), ids in sorted(_buckets(sigs, bands, rows).items()):
        ids = sorted(ids)
        if len(ids) > hot:
            roles[ids, band] = HOT
            roles[ids[0], band] = HUB
            for lo in range(0, len(ids), chunk):
                part = ids[lo : lo + chunk]
                groups.append((band, True, part if lo == 0 else [ids[0], *part]))
        else:
            groups.append((band, False, ids[::-1]))  # any order within a bucket
    members = [d for _, _, ids in groups for d in ids]
    offsets = np.cumsum([0] + [len(ids) for _, _, ids in groups])
    return (
        np.array([g[0] for g in groups], dtype=np.int32),
        np.array([g[1] for g in groups], dtype=bool),
        offsets,
        np.array(members, dtype=np.int64),
        sigs[members] if members else np.empty((0, bands * rows), np.uint64),
        roles[members] if members else np.empty((0, bands), np.int8),
    )


def _run(sigs: np.ndarray, bands: int, rows: int, hot: int, chunk: int):  # type: ignore[no-untyped-def]
    given = _kernel_input(sigs, bands, rows, hot, chunk)
    a, b, band, equal, bucket = first_band_pairs(*given, rows)
    got = list(zip(a.tolist(), b.tolist(), band.tolist(), equal.tolist(), strict=True))
    assert len(got) == len(set(got)), "a pair produced twice"
    bands_of, offsets, members = given[0], given[2], given[3]
    for x, y, c, g in zip(a.tolist(), b.tolist(), band.tolist(), bucket.tolist(), strict=True):
        assert bands_of[g] == c  # the bucket that produced the pair holds both documents
        assert {x, y} <= set(members[offsets[g] : offsets[g + 1]].tolist())
    return set(got)


@given(
    st.integers(2, 4),
    st.integers(1, 3),
    st.lists(st.lists(st.integers(0, 2), min_size=12, max_size=12), min_size=0, max_size=14),
    st.integers(2, 6),
    st.integers(1, 4),
)
def test_first_band_pairs_equal_the_naive_rule(bands, rows, values, hot, chunk) -> None:  # type: ignore[no-untyped-def]
    sigs = np.array([v[: bands * rows] for v in values], dtype=np.uint64).reshape(
        len(values), bands * rows
    )
    assert _run(sigs, bands, rows, hot, chunk) == _oracle(sigs, bands, rows, hot)


def test_a_pair_first_met_off_the_hub_of_a_hot_bucket_comes_from_a_later_band() -> None:
    # band 0: one hot bucket {0, 1, 2} (hub 0); band 1: 1 and 2 again, an ordinary bucket
    sigs = np.array([[5, 1], [5, 2], [5, 2], [6, 3]], dtype=np.uint64)
    got = _run(sigs, 2, 1, hot=2, chunk=1)
    assert got == {(0, 1, 0, 1), (0, 2, 0, 1), (1, 2, 1, 2)}


def test_identical_signatures_meet_once_in_band_zero() -> None:
    sigs = np.tile(np.arange(8, dtype=np.uint64), (5, 1))
    got = _run(sigs, 4, 2, hot=100, chunk=100)
    assert got == {(a, b, 0, 8) for a in range(5) for b in range(a + 1, 5)}


def test_signed_signatures_and_empty_input() -> None:
    sigs = np.array([[-1, -2], [-1, 7]], dtype=np.int64)
    got = first_band_pairs([0], [False], [0, 2], [0, 1], sigs, [[0, 0]] * 2, 1)
    assert [x.tolist() for x in got] == [[0], [1], [0], [1], [0]]
    empty = first_band_pairs([], [], [0], [], np.empty((0, 4)), np.empty((0, 2)), 2)
    assert all(len(x) == 0 for x in empty)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0], [False], [0, 3], [0, 1], [[1], [1]], [[0], [0]], 1), "offsets"),
        (([0, 1], [False], [0, 2], [0, 1], [[1], [1]], [[0], [0]], 1), "disagree"),
        (([0], [False], [0, 2], [0, 1], [[1, 2, 3]] * 2, [[0]] * 2, 2), "signatures"),
        (([0], [False], [0, 2], [0, 1], [[1, 2]] * 2, [[0]] * 2, 1), "roles"),
        (([3], [False], [0, 2], [0, 1], [[1, 2]] * 2, [[0, 0]] * 2, 1), "band"),
    ],
)
def test_inconsistent_input_is_refused(args, message) -> None:  # type: ignore[no-untyped-def]
    band, star, offsets, member, sigs, roles, rows = args
    with pytest.raises(ValueError, match=message):
        first_band_pairs(
            band, star, offsets, member, np.array(sigs, np.uint64), np.array(roles), rows
        )


def test_grouped_jaccard_scores_each_pair_from_its_groups_texts() -> None:
    """The exact check of the pairs a bucket found (``udfs.grouped_jaccard_fn``): one row per
    pair with its exact word-shingle Jaccard, the group's carried columns repeated."""
    import pyarrow as pa

    from neardup_udfs.kernels.shingle import word_shingles
    from neardup_udfs.presets import resolve
    from neardup_udfs.udfs import grouped_jaccard_fn

    texts = {
        "d1": "the quick brown fox jumps over the lazy dog",
        "d2": "the quick brown fox jumps over the lazy cat",
        "d3": "a completely different sentence with other words",
        "d4": "",
    }
    member = pa.struct([("doc_id", pa.string()), ("text", pa.string())])
    pair = pa.struct([("a", pa.string()), ("b", pa.string())])
    groups = [  # (band, members, pairs): a document may be in several groups
        (3, ["d2", "d1", "d3"], [("d1", "d2"), ("d1", "d3")]),
        (7, ["d1", "d4", "d2"], [("d2", "d4"), ("d1", "d2")]),
        (9, [], []),
    ]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([g[0] for g in groups], pa.int32()),
            pa.array(
                [[{"doc_id": d, "text": texts[d]} for d in g[1]] for g in groups], pa.list_(member)
            ),
            pa.array([[{"a": a, "b": b} for a, b in g[2]] for g in groups], pa.list_(pair)),
        ],
        names=["band", "members", "pairs"],
    )
    w = resolve("semblance").param("w")
    (out,) = list(grouped_jaccard_fn(resolve("semblance"), ["band"])([batch]))
    columns = (out.column(c).to_pylist() for c in ("a", "b", "band", "similarity"))
    got = list(zip(*columns, strict=True))

    def jaccard(x: str, y: str) -> float:
        sx, sy = set(word_shingles(texts[x], w)), set(word_shingles(texts[y], w))
        return len(sx & sy) / len(sx | sy) if sx | sy else 0.0

    want = [(a, b, band, jaccard(a, b)) for band, _, pairs in groups for a, b in pairs]
    assert got == want
    assert 0.5 < want[0][3] < 1.0 and want[1][3] == 0.0  # not a vacuous comparison

    stray = batch.slice(0, 1).set_column(
        2, "pairs", pa.array([[{"a": "d1", "b": "d9"}]], pa.list_(pair))
    )
    with pytest.raises(ValueError, match="'d9' is not a member"):
        list(grouped_jaccard_fn(resolve("semblance"), ["band"])([stray]))
