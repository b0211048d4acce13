"""The checked read's counts: rejects by reason (``stages.read``)."""

from __future__ import annotations

import pytest

from neardup_udfs.stages import read


@pytest.mark.spark
def test_reason_counts_and_the_most_frequent_rejects(spark) -> None:  # type: ignore[no-untyped-def]
    """Every reason counted in one job (None: the accepted rows); report.json lists the
    ``top`` most frequent rejects, ties by reason."""
    rows = [("a", None)] * 3 + [("b", "null text")] * 2 + [("c", "duplicate doc_id")] * 2
    tagged = spark.createDataFrame([*rows, ("d", "corrupt data")], "doc_id string, reason string")
    counts = read.reason_counts(tagged)
    assert counts == {None: 3, "null text": 2, "duplicate doc_id": 2, "corrupt data": 1}
    top = read.input_stats(tagged, top=2)["rejects_by_reason"]
    assert list(top.items()) == [("duplicate doc_id", 2), ("null text", 2)]
    assert read.input_stats(tagged, counts={"x": 1})["rejects_by_reason"] == {"x": 1}
