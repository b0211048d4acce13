"""The checked read's counts: rejects by reason (``stages.read``)."""

from __future__ import annotations

import json

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


@pytest.mark.spark
def test_a_frame_of_unknown_size_is_fitted_to_the_text_its_first_pass_counted(  # type: ignore[no-untyped-def]
    spark, monkeypatch, tmp_path
) -> None:
    """Plan statistics fit the shuffle partitions before the first pass; a frame Spark cannot
    size (an RDD's rows) runs that pass on the floor and is fitted again to its text bytes."""
    from neardup_udfs import session
    from neardup_udfs.runtime import Cache
    from tests.spark_settings import spark_conf

    monkeypatch.setattr(session, "_chosen_by_user", lambda spark, key=None: False)
    monkeypatch.setattr(session, "BYTES_PER_PARTITION", 100)
    rows = [(str(i), "x" * 50) for i in range(40)]  # 2,000 bytes of text: 20 partitions
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "text": t}) + "\n" for i, t in rows))
    sized = spark.read.json(str(path))  # a file source: sized by its plan statistics
    schema = "doc_id string, text string"
    unsized = spark.createDataFrame(spark.sparkContext.parallelize(rows), schema)
    cache = Cache()
    try:
        adaptive = spark.conf.get(session.ADAPTIVE)
        with spark_conf(spark, **{session.SHUFFLE_PARTITIONS: "200", session.ADAPTIVE: adaptive}):
            fitted = read.check_rows(spark, unsized, "text", 1000, cache).partitions
            assert fitted["shuffle_partitions"] == 20
            planned = read.check_rows(spark, sized, "text", 1000, cache).partitions
            assert planned["shuffle_partitions"] == -(-session.plan_bytes(sized) // 100)
    finally:
        cache.release()
