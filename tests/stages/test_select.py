"""stages.select: one representative per component, chosen by the rule."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def test_representative_rules_choose_the_first_member(spark) -> None:  # type: ignore[no-untyped-def]
    """select_representatives: min_id, longest (ties: smaller id) and earliest (nulls last);
    one representative per component, a component of one represents itself."""
    from neardup_udfs.stages.select import select_representatives

    members = spark.createDataFrame(
        [("a", "a", 100, "2024-03-01"), ("b", "b", 130, "2024-01-15"), ("c", "c", 130, None),
         ("d", "a", 100, "2024-06-01"), ("z", "z", 40, "2023-01-01")],
        "doc_id string, leader string, __length int, __order string",
    )  # fmt: skip
    labels = spark.createDataFrame(
        [("a", "a"), ("b", "a"), ("c", "a")], "node string, label string"
    )
    fp = {"a": 0, "b": 1, "c": 3, "z": -1}
    sketches = spark.createDataFrame(list(fp.items()), "doc_id string, fingerprint bigint")
    chosen = {}
    for rule in ("min_id", "longest", "earliest"):
        sel = select_representatives(
            members, labels, sketches, kind="simhash", rule=rule, floor=10, no_chaining=False
        )
        rows = {r.doc_id: r for r in sel.clusters.collect()}
        sel.persisted.unpersist()
        assert {d: r.is_representative for d, r in rows.items() if r.is_representative} == {
            rows["a"].cluster_id: True,
            "z": True,
        }
        assert rows["d"].cluster_id == rows["a"].cluster_id and rows["d"].distance == (
            bin(fp["a"] ^ fp[rows["a"].cluster_id]).count("1")
        )
        chosen[rule] = rows["a"].cluster_id
    assert chosen == {"min_id": "a", "longest": "b", "earliest": "b"}
