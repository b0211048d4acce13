"""``kernels.band_pairs``: every pair a band produces, once, at its first producing band."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels.band_pairs import HOT, HUB, NOT_HOT, first_band_pairs, first_table_pairs
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme
from neardup_udfs.kernels.lsh import band_keys


def _keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    return np.array([band_keys(sig, bands, rows) for sig in sigs], dtype=np.uint64).reshape(
        len(sigs), bands
    )


def _buckets(keys: np.ndarray) -> dict[tuple[int, int], list[int]]:
    out: dict[tuple[int, int], list[int]] = defaultdict(list)
    for d, row in enumerate(keys.tolist()):
        for b, key in enumerate(row):
            out[(b, key)].append(d)
    return {k: v for k, v in out.items() if len(v) > 1}


def _first_bands(keys: np.ndarray, hot: int) -> dict[tuple[int, int], int]:
    """Every pair some bucket produces (all pairs, or the hub's when hot) with its first
    producing band: the candidates rule written naively."""
    first: dict[tuple[int, int], int] = {}
    for (band, _), ids in _buckets(keys).items():
        if len(ids) > hot:
            pairs = [(min(ids), d) for d in ids if d != min(ids)]
        else:
            pairs = [(x, y) for i, x in enumerate(ids) for y in ids[i + 1 :]]
        for pair in pairs:
            first[pair] = min(first.get(pair, band), band)
    return first


def _oracle(sigs: np.ndarray, bands: int, rows: int, hot: int) -> set[tuple[int, int, int, int]]:
    """The naive rule's pairs with their first producing band and equal slots."""
    first = _first_bands(_keys(sigs, bands, rows), hot)
    return {(a, b, c, int(np.sum(sigs[a] == sigs[b]))) for (a, b), c in first.items()}


def _kernel_input(keys: np.ndarray, hot: int, chunk: int):  # type: ignore[no-untyped-def]
    """The buckets as the Spark stage hands them over: hot ones cut into chunks of at most
    ``chunk`` members, the hub in each; every member row with its document's roles.
    Returns ``band, star, offsets, members, roles``."""
    bands = keys.shape[1]
    roles = np.full((len(keys), bands), NOT_HOT, dtype=np.int8)
    groups: list[tuple[int, bool, list[int]]] = []
    for (band, _), ids in sorted(_buckets(keys).items()):
        ids = sorted(ids)
        if len(ids) > hot:
            roles[ids, band] = HOT
            roles[ids[0], band] = HUB
            for lo in range(0, len(ids), chunk):
                part = ids[lo : lo + chunk]
                groups.append((band, True, part if lo == 0 else [ids[0], *part]))
        else:
            groups.append((band, False, ids[::-1]))  # any order within a bucket
    members = np.array([d for _, _, ids in groups for d in ids], dtype=np.int64)
    offsets = np.cumsum([0] + [len(ids) for _, _, ids in groups])
    return (
        np.array([g[0] for g in groups], dtype=np.int32),
        np.array([g[1] for g in groups], dtype=bool),
        offsets,
        members,
        roles[members] if len(members) else np.empty((0, bands), np.int8),
    )


def _checked(given, got) -> set[tuple[int, int, int, int]]:  # type: ignore[no-untyped-def]
    """The kernel's output as a set, after checking each pair came once from a bucket of
    its band that holds both documents."""
    a, b, band, score, bucket = got
    rows = list(zip(a.tolist(), b.tolist(), band.tolist(), score.tolist(), strict=True))
    assert len(rows) == len(set(rows)), "a pair produced twice"
    assert len({(x, y) for x, y, _, _ in rows}) == len(rows), "a pair produced twice"
    bands_of, offsets, members = given[0], given[2], given[3]
    for x, y, c, g in zip(a.tolist(), b.tolist(), band.tolist(), bucket.tolist(), strict=True):
        assert bands_of[g] == c  # the bucket that produced the pair holds both documents
        assert {x, y} <= set(members[offsets[g] : offsets[g + 1]].tolist())
    return set(rows)


def _run(sigs: np.ndarray, bands: int, rows: int, hot: int, chunk: int):  # type: ignore[no-untyped-def]
    band, star, offsets, members, roles = given = _kernel_input(
        _keys(sigs, bands, rows), hot, chunk
    )
    member_sigs = sigs[members] if len(members) else np.empty((0, bands * rows), np.uint64)
    return _checked(given, first_band_pairs(band, star, offsets, members, member_sigs, roles, rows))


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


def _run_tables(fps: np.ndarray, scheme, hot: int, chunk: int):  # type: ignore[no-untyped-def]
    band, star, offsets, members, roles = given = _kernel_input(scheme.keys(fps), hot, chunk)
    got = first_table_pairs(band, star, offsets, members, fps[members], roles, scheme)
    return _checked(given, got)


@given(
    st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 5), st.lists(st.integers(0, 63), max_size=5)), max_size=16),
    st.sampled_from([Scheme(4, 3), Scheme(6, 3), Scheme(3, 2), SampledScheme(8, 12, 6)]),
    st.integers(2, 6),
    st.integers(1, 4),
)
def test_first_table_pairs_equal_the_naive_rule(seeds, flips, scheme, hot, chunk) -> None:  # type: ignore[no-untyped-def]
    """Hamming tables: fingerprints a few bits from a handful of seeds (so tables collide,
    and some buckets turn hot), each pair once in its first producing table, with its
    exact Hamming distance."""
    fps = []
    for seed, bits in flips:
        fp = seeds[seed % len(seeds)]
        for bit in bits:
            fp ^= 1 << bit
        fps.append(fp)
    values = np.array(fps, dtype=np.uint64)
    first = _first_bands(scheme.keys(values), hot)
    want = {(a, b, t, bin(fps[a] ^ fps[b]).count("1")) for (a, b), t in first.items()}
    assert _run_tables(values, scheme, hot, chunk) == want
    signed = values.view(np.int64)  # bigint as Spark holds it: the same pairs
    assert _run_tables(signed, scheme, hot, chunk) == want


def test_tables_refuse_fingerprints_of_another_shape() -> None:
    with pytest.raises(ValueError, match="fingerprints"):
        first_table_pairs(
            [0], [False], [0, 2], [0, 1], [[1, 2], [1, 2]], [[0] * 4] * 2, Scheme(4, 3)
        )
    with pytest.raises(ValueError, match="roles"):
        first_table_pairs([0], [False], [0, 2], [0, 1], [1, 2], [[0] * 3] * 2, Scheme(4, 3))
    empty = first_table_pairs(
        [], [], [0], [], np.empty(0, np.int64), np.empty((0, 4)), Scheme(4, 3)
    )
    assert all(len(x) == 0 for x in empty)


def test_sorted_jaccard_scores_each_pair_from_its_groups_texts() -> None:
    """The exact check of the pairs a bucket found (``driver.batches.sorted_jaccard_fn``): one
    row per pair with its exact word-shingle Jaccard, the group's carried columns repeated,
    whatever batches the sorted rows come in (a group cut between batches, a batch inside
    one group)."""
    import pyarrow as pa

    from neardup_udfs.driver.batches import sorted_jaccard_fn
    from neardup_udfs.kernels.shingle import word_shingles
    from neardup_udfs.presets import resolve

    texts = {
        "d1": "the quick brown fox jumps over the lazy dog",
        "d2": "the quick brown fox jumps over the lazy cat",
        "d3": "a completely different sentence with other words",
        "d4": "",
        "d5": "the quick brown fox jumps over the lazy dog again",
    }
    groups = [  # (band, key, members, pairs): a document may be in several groups
        (3, 1, ["d2", "d1", "d3"], [("d1", "d2"), ("d1", "d3")]),
        (3, 2, ["d1", "d5"], [("d1", "d5")]),
        (7, 1, ["d1", "d4", "d2", "d5"], [("d2", "d4"), ("d1", "d2"), ("d2", "d5")]),
    ]
    rows = []  # members and pairs of a group in any order, groups one after another
    for band, key, members, pairs in groups:
        mixed = [(band, key, d, texts[d], None) for d in members]
        mixed += [(band, key, a, None, b) for a, b in pairs]
        rows += mixed[::2] + mixed[1::2]
    columns = list(zip(*rows, strict=True))
    table = pa.table(
        {
            "band": pa.array(columns[0], pa.int32()),
            "key": pa.array(columns[1], pa.int64()),
            "doc_id": pa.array(columns[2], pa.string()),
            "text": pa.array(columns[3], pa.string()),
            "b": pa.array(columns[4], pa.string()),
        }
    )
    w = resolve("semblance").param("w")
    check = sorted_jaccard_fn(resolve("semblance"), ["band", "key"], ["band"])

    def jaccard(x: str, y: str) -> float:
        sx, sy = set(word_shingles(texts[x], w)), set(word_shingles(texts[y], w))
        return len(sx & sy) / len(sx | sy) if sx | sy else 0.0

    want = [(a, b, band, jaccard(a, b)) for band, _, _, pairs in groups for a, b in pairs]
    assert 0.5 < want[0][3] < 1.0 and want[1][3] == 0.0  # not a vacuous comparison
    for cuts in ([], [1], [3, 4, 5, 6, 7, 8], [5, 10], list(range(1, table.num_rows))):
        bounds = [0, *cuts, table.num_rows]
        batches = [table.slice(lo, hi - lo).combine_chunks().to_batches()[0]
                   for lo, hi in zip(bounds, bounds[1:], strict=False)]  # fmt: skip
        out = pa.Table.from_batches(list(check(iter(batches))))
        columns = [out.column(c).to_pylist() for c in ("a", "b", "band", "similarity")]
        got = list(zip(*columns, strict=True))
        assert sorted(got) == sorted(want), cuts

    stray = table.slice(0, 5).set_column(4, "b", pa.array([None, None, "d9", None, None]))
    with pytest.raises(ValueError, match="'d9' is not a member"):
        list(check(iter(stray.to_batches())))
