"""stages.rejects: every input row is kept, or rejected with its reason."""

from __future__ import annotations

import pytest

from neardup_udfs.stages.rejects import split_rejects

pytestmark = pytest.mark.spark


def test_rejects_have_reasons_and_nothing_is_lost(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [
        ("a", "fine"),
        (None, "no id"),
        ("b", None),
        ("c", "x" * 50),
        ("d", "one"),
        ("d", "two"),
        ("e", "ok"),
    ]
    df = spark.createDataFrame(rows, "doc_id string, text string")
    split = split_rejects(df, "text", max_text_bytes=20)
    good = sorted(r.doc_id for r in split.good.collect())
    rejects = sorted((r.doc_id or "", r.reason) for r in split.rejects.collect())
    assert good == ["a", "d", "e"]
    assert rejects == [
        ("", "null doc_id"),
        ("b", "null text"),
        ("c", "text larger than 20 bytes"),
        ("d", "duplicate doc_id"),
    ]
    assert [r.text for r in split.good.where("doc_id = 'd'").collect()] == ["one"]
    numbers = spark.createDataFrame([("a", 1), ("b", 2)], "doc_id string, text int")
    bad = split_rejects(numbers, "text", 100)
    assert bad.good.count() == 0
    assert {r.reason for r in bad.rejects.collect()} == {"text column is int, not a string"}
