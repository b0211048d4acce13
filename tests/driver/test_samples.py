"""driver.samples: which clusters samples/ holds and which members report.html shows, one rule
each; Spark's stage (stages.samples) runs them over partitions."""

from __future__ import annotations

import pyarrow as pa
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.driver.samples import (
    chosen_clusters,
    chosen_clusters_fn,
    sample_hashes,
    shown_mask,
)

IDS = ["", "a", "abcd", "abcdefgh", "x" * 31, "y" * 32, "z" * 77, "héllo wörld ✓ 😀"]


def _reference_hash(seed: int, value: str) -> int:
    """Spark's xxhash64(lit(seed), value) as its definition reads: XXH64 of the seed's four
    little-endian bytes from 42, then of the value's UTF-8 bytes from that."""
    first = xxhash.xxh64_intdigest((seed & 0xFFFFFFFF).to_bytes(4, "little"), 42)
    h = xxhash.xxh64_intdigest(value.encode("utf-8"), first)
    return h - (1 << 64) if h >= 1 << 63 else h


def test_sample_hashes_are_the_reference_of_each_id_in_any_chunking() -> None:
    for seed in (0, 7, -3):
        want = [_reference_hash(seed, v) for v in IDS]
        assert sample_hashes(pa.array(IDS), seed).tolist() == want
        chunked = pa.chunked_array([IDS[:3], IDS[3:3], IDS[3:]])
        assert sample_hashes(chunked, seed).tolist() == want
        assert sample_hashes(pa.array(IDS).slice(2, 4), seed).tolist() == want[2:6]
    assert sample_hashes(pa.array([], pa.string()), 0).tolist() == []


@pytest.mark.spark
def test_sample_hashes_are_sparks_xxhash64(spark) -> None:  # type: ignore[no-untyped-def]
    """The order is Spark's ``xxhash64(lit(seed), id)``, as when Spark computed it: the
    clusters sampled are those of earlier releases."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(v,) for v in IDS], "v string")
    for seed in (0, 7, -3):
        got = df.select("v", F.xxhash64(F.lit(seed), F.col("v")).alias("h")).collect()
        assert {r.v: r.h for r in got} == dict(
            zip(IDS, sample_hashes(pa.array(IDS), seed).tolist(), strict=True)
        )


def _sizes(rows: list[tuple[str, int]]) -> pa.Table:
    return pa.table(
        {"cluster_id": pa.array([r[0] for r in rows], pa.string()),
         "cluster_size": pa.array([r[1] for r in rows], pa.int64())}
    )  # fmt: skip


def test_chosen_clusters_are_the_largest_then_the_hash_order() -> None:
    rows = [("solo", 1), ("b", 4), ("a", 4), ("c", 9)] + [(f"s{i}", 2) for i in range(20)]
    chosen = chosen_clusters(_sizes(rows), 2, 3, 0)
    ids = chosen.column("cluster_id").to_pylist()
    assert ids[:2] == ["c", "a"]  # the biggest, then the smaller id of two of size 4
    rest = sorted(
        ((_reference_hash(0, c), c) for c, n in rows if n > 1 and c not in ("c", "a")),
    )
    assert ids[2:] == [c for _, c in rest[:3]]
    assert chosen.column("cluster_size").to_pylist()[:2] == [9, 4]
    assert "solo" not in chosen_clusters(_sizes(rows), 50, 50, 0).column("cluster_id").to_pylist()
    assert chosen_clusters(_sizes([]), 5, 5, 0).num_rows == 0


@given(
    st.lists(st.integers(1, 6), min_size=0, max_size=60),
    st.lists(st.integers(0, 3), min_size=60, max_size=60),
    st.integers(0, 4),
    st.integers(0, 4),
    st.integers(-5, 5),
)
def test_any_parts_kept_with_largest_plus_sample_choose_as_the_whole(
    sizes: list[int], part_of: list[int], largest: int, sample: int, seed: int
) -> None:
    """Each part keeps chosen_clusters(part, largest, largest + sample); the choice over what
    the parts kept is the whole's, and so is the batch function's over any batches."""
    rows = [(f"c{i}", n) for i, n in enumerate(sizes)]
    whole = chosen_clusters(_sizes(rows), largest, sample, seed)
    parts = [[r for i, r in enumerate(rows) if part_of[i] == p] for p in range(4)]
    kept = pa.concat_tables(
        [chosen_clusters(_sizes(p), largest, largest + sample, seed) for p in parts]
    )
    assert chosen_clusters(kept, largest, sample, seed) == whole
    fn = chosen_clusters_fn(largest, largest + sample, seed)
    batches = [b for p in parts for b in _sizes(p).to_batches(max_chunksize=3)]
    streamed = pa.Table.from_batches(list(fn(iter(batches))), schema=whole.schema)
    assert chosen_clusters(streamed, largest, sample, seed) == whole


def _keys(metric: str | None = "similarity") -> pa.Table:
    keys = pa.table(
        {
            "cluster_id": ["c"] * 7 + ["d"] * 2,
            "doc_id": ["c", "m1", "m2", "m3", "m4", "m5", "m6", "d", "x"],
            "is_representative": [True] + [False] * 6 + [True, False],
            "similarity": [1.0, 0.9, 0.71, None, 0.8, 0.75, 0.75, 1.0, 0.95],
        }
    )
    if metric == "distance":
        return keys.set_column(3, "distance", pa.array([0, 1, 9, None, 5, 3, 3, 0, 2]))
    return keys if metric else keys.drop_columns(["similarity"])


def test_shown_members_are_the_least_similar_and_each_cluster_decides_its_own() -> None:
    """Of each cluster its representative and the least similar members (distance: the
    farthest), unscored last, ties by id; a cluster's rows give the same alone, in any
    order."""
    for metric, want in (
        ("similarity", {"c", "m2", "m5", "m6", "d", "x"}),
        ("distance", {"c", "m2", "m4", "m5", "d", "x"}),
        (None, {"c", "m1", "m2", "m3", "d", "x"}),
    ):
        keys = _keys(metric)
        mask = shown_mask(keys, metric, 3)
        shown = set(keys.column("doc_id").filter(mask).to_pylist())
        assert shown == want, metric
        for cluster in ("c", "d"):
            alone = keys.filter(pa.compute.equal(keys.column("cluster_id"), cluster))
            backwards = alone.take(list(range(alone.num_rows))[::-1])
            for part in (alone, backwards):
                got = set(part.column("doc_id").filter(shown_mask(part, metric, 3)).to_pylist())
                assert got == {d for d in want if d in alone.column("doc_id").to_pylist()}
    assert shown_mask(_keys().slice(0, 0), "similarity", 3).tolist() == []
