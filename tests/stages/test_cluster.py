"""stages.cluster: the representative rules and exact groups through anchored clustering."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def test_anchored_rules_and_exact_groups(spark) -> None:  # type: ignore[no-untyped-def]
    """cluster(): a group takes its first member's place in the rule's order and that member
    is the one kept; the others share the group's fate and score."""
    from neardup_udfs.stages.cluster import cluster

    members = spark.createDataFrame(
        [("a", "a", 100, "2024-03-01"), ("d", "a", 120, None), ("b", "b", 130, "2024-01-15"),
         ("c", "c", 90, None), ("e", "c", 90, "2025-01-01"), ("z", "z", 40, "2023-01-01")],
        "doc_id string, leader string, __length int, __order string",
    )  # fmt: skip
    verified = spark.createDataFrame(
        [("a", "b", 0.8), ("b", "c", 0.9)], "a string, b string, similarity double"
    )
    sketches = spark.createDataFrame([], "doc_id string, signature array<bigint>")
    want = {  # rule -> {doc: (cluster_id, is_representative, similarity)}
        # a first: b is removed, c is kept, and b goes to the closer of them (c, 0.9)
        "min_id": {"a": ("a", True, 1.0), "d": ("a", False, 1.0), "b": ("c", False, 0.9),
                   "c": ("c", True, 1.0), "e": ("c", False, 1.0)},
        # b (130) first: groups a and c are removed in its favour
        "longest": {"b": ("b", True, 1.0), "a": ("b", False, 0.8), "d": ("b", False, 0.8),
                    "c": ("b", False, 0.9), "e": ("b", False, 0.9)},
        # b (Jan 2024) first; group c would be kept as e (dated), but b removes it
        "earliest": {"b": ("b", True, 1.0), "a": ("b", False, 0.8), "d": ("b", False, 0.8),
                     "c": ("b", False, 0.9), "e": ("b", False, 0.9)},
    }  # fmt: skip
    for rule, expected in want.items():
        got = cluster(
            members, verified, sketches, kind="minhash", rule=rule, clustering="anchored",
            max_rounds=5, max_driver_edges=0, floor=0.7,
        ).clusters.collect()  # fmt: skip
        rows = {r.doc_id: (r.cluster_id, r.is_representative, r.similarity) for r in got}
        assert rows.pop("z") == ("z", True, 1.0)
        assert rows == expected, rule
