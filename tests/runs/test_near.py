"""runs.near: the near-duplicate core every deduplicating run shares (candidates -> verify
-> cluster), on hand-made SimHash fingerprints whose distances are known."""

from __future__ import annotations

import logging

import pytest

from neardup_udfs.clock import StageClock
from neardup_udfs.driver.settings import NearCounts, NearSettings
from neardup_udfs.presets import resolve
from neardup_udfs.runs.near import NearDuplicates
from neardup_udfs.runtime import Cache
from neardup_udfs.schemas import CLUSTER_ID, DOC_ID, FINGERPRINT, IS_REPRESENTATIVE

pytestmark = pytest.mark.spark

BASE = 1 << 40  # not 0: a text's SimHash of 0 means "no features" and gets no keys
FINGERPRINTS = {
    "a": BASE,
    "b": BASE ^ 0b111,  # 3 bits from a
    "c": BASE ^ 0b1111,  # 4 bits from a, 1 from b
    "d": BASE ^ 0x0F0F_0F0F_0000_0000,  # 16 bits from every other
}


def settings(clustering: str) -> NearSettings:
    return NearSettings(
        max_distance=3,
        threshold=0.7,
        verification="off",
        hot_bucket_size=1000,
        clustering=clustering,
        max_rounds=50,
        max_driver_edges=200_000,
        rule="min_id",
        floor=3,
    )


@pytest.mark.parametrize(
    ("clustering", "kept"),
    [
        # a is kept first, so b (3 bits from a) is removed; c (4 bits from a) is kept, and b
        # is attached to the kept document it is closest to: c, 1 bit away
        ("anchored", {"a": "a", "b": "c", "c": "c", "d": "d"}),
        ("connected", {"a": "a", "b": "a", "c": "a", "d": "d"}),  # single link chains c
    ],
)
def test_the_shared_stages_find_verify_and_cluster(spark, clustering, kept) -> None:  # type: ignore[no-untyped-def]
    sketches = spark.createDataFrame(
        [(doc, fp) for doc, fp in FINGERPRINTS.items()], f"{DOC_ID} string, {FINGERPRINT} long"
    )
    members = spark.createDataFrame(
        [(doc, doc, 10, None) for doc in FINGERPRINTS],
        f"{DOC_ID} string, leader string, __length long, __order string",
    )
    counts, cache = NearCounts(), Cache()
    clock = StageClock(logging.getLogger("test"))
    near = NearDuplicates(
        sketches,
        len(FINGERPRINTS),
        resolve("ditto/2"),
        settings(clustering),
        cache=cache,
        clock=clock,
        counts=counts,
    )
    try:
        edges = near.find()
        assert sorted((r.a, r.b, r.distance) for r in edges.collect()) == [
            ("a", "b", 3),
            ("b", "c", 1),
        ]  # (a, c) at 4 bits is not verified; every candidate was scored once
        assert counts.verified == 2 and counts.candidates >= 2
        assert sum(band["candidates"] for band in near.band_report()) == counts.candidates
        clustered = near.cluster(members)
        got = {
            r[DOC_ID]: (r[CLUSTER_ID], r[IS_REPRESENTATIVE]) for r in clustered.clusters.collect()
        }
        assert {doc: cluster for doc, (cluster, _) in got.items()} == kept
        assert {doc for doc, (_, rep) in got.items() if rep} == set(kept.values())
        assert (counts.kept, counts.removed) == (
            len(set(kept.values())),
            4 - len(set(kept.values())),
        )
        assert set(clock.seconds) == {"pairs", "cluster"}
        assert near.cluster_path["path"] == ("driver" if clustering == "anchored" else "rounds")
    finally:
        cache.release()
