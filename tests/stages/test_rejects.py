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


def test_both_shells_give_each_row_the_first_rule_that_matches(spark) -> None:  # type: ignore[no-untyped-def]
    """``io.reasons.ROW_RULES`` rendered as Spark Columns (``split_rejects``) and as numpy
    masks (``driver.read.reject_reasons``): the same reason for every row, also for rows
    that several rules match (a null id with a null text or a text too large; a null text
    is never too large). The reader's own rule: ``tests/driver/test_read.py``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from neardup_udfs.driver.read import reject_reasons

    rows = [("a", "fine"), (None, None), (None, "y" * 30), ("b", None), ("c", "x" * 30),
            (None, "ok"), ("d", "é" * 10), ("e", "é" * 11)]  # fmt: skip
    table = pa.table({"doc_id": [r[0] for r in rows], "text": [r[1] for r in rows]})
    size = pc.fill_null(pc.binary_length(table["text"]), 0).to_numpy()
    numpy_reasons = reject_reasons(table["doc_id"], table["text"], size, 20).tolist()
    df = spark.createDataFrame(rows, "doc_id string, text string")
    tagged = split_rejects(df, "text", max_text_bytes=20).tagged.collect()
    spark_reasons = {(r.doc_id, r.text): r.reason for r in tagged}
    assert [spark_reasons[row] for row in rows] == numpy_reasons
    too_large = "text larger than 20 bytes"
    assert numpy_reasons == [None, "null doc_id", "null doc_id", "null text", too_large,
                             "null doc_id", None, too_large]  # fmt: skip
