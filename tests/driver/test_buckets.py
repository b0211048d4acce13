"""driver.buckets: the bucket rule (members in id order, hot buckets in chunks, each later
chunk with the hub) stated once; the one-process core's groups and the Spark stage's batch
function are the same groups."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.driver.buckets import Buckets, chunks, placed_fn


def test_chunks_by_hand() -> None:
    chunk, hub_bucket, hub_chunk = chunks(np.array([1, 3, 7, 2, 5]), 3)
    assert chunk.tolist() == [0] + [0, 0, 0] + [0, 0, 0, 1, 1, 1, 2] + [0, 0] + [0, 0, 0, 1, 1]
    assert hub_bucket.tolist() == [2, 2, 4]  # 7 members: chunks 1 and 2; 5 members: chunk 1
    assert hub_chunk.tolist() == [1, 2, 1]
    assert [a.tolist() for a in chunks(np.zeros(0, np.int64), 3)] == [[], [], []]


@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=120),
    st.integers(1, 6),
)
def test_the_core_s_groups_and_the_spark_batch_function_place_the_same_rows(
    keys: list[int], limit: int
) -> None:
    """For one band's keys, Buckets.groups (the core) and placed_fn over the buckets as
    Spark groups them (ids sorted, buckets of 2+ members) give the same (key, chunk, star,
    member) rows."""
    bucket = Buckets.of(np.array(keys, dtype=np.int64))
    rows, offsets, g_key, g_chunk, g_star = bucket.groups(limit)
    want = sorted(
        (int(g_key[g]), int(g_chunk[g]), bool(g_star[g]), f"d{rows[r]:04d}")
        for g in range(len(g_key))
        for r in range(offsets[g], offsets[g + 1])
    )
    by_key: dict[int, list[str]] = {}
    for i, k in enumerate(keys):
        by_key.setdefault(k, []).append(f"d{i:04d}")
    shared = {k: sorted(ids) for k, ids in by_key.items() if len(ids) > 1}
    buckets = pa.record_batch(
        {
            "band": pa.array([0] * len(shared), pa.int32()),
            "key": pa.array(list(shared), pa.int64()),
            "ids": pa.array(list(shared.values()), pa.list_(pa.string())),
            "size": pa.array([len(v) for v in shared.values()], pa.int32()),
        }
    )
    batches = [buckets.slice(0, 2), buckets.slice(2)]
    got = pa.Table.from_batches(list(placed_fn(limit)(iter(batches))))
    assert sorted(
        zip(got["key"].to_pylist(), got["chunk"].to_pylist(), got["star"].to_pylist(),
            got["doc_id"].to_pylist(), strict=True)
    ) == want  # fmt: skip
    assert set(got["band"].to_pylist()) <= {0}
