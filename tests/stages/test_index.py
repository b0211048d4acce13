"""stages.index: a new document matches every indexed copy, or, past the hot bucket size,
the bucket's hub only; a document without text is not indexed."""

from __future__ import annotations

from pathlib import Path

import pytest
from index_runs import run_index, write_crawl

from neardup_udfs.index import store as index_store
from neardup_udfs.presets import resolve

pytestmark = pytest.mark.spark

SIMHASH = resolve("ditto/2", normalize="web")  # the jobs' default


def test_hot_indexed_buckets_match_through_their_hub(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from neardup_udfs.stages.index import IndexReader, match_index
    from neardup_udfs.stages.normalize import EMPTY
    from neardup_udfs.udfs import exact_key_udf

    text = "the same page, crawled from six mirrors under six different urls, word for word"
    copies = [(f"mirror{i}", text) for i in range(6)]
    index = tmp_path / "index"
    script_only = (
        "script-only",
        "<html><head><script>go('/x')</script></head><body></body></html>",
    )
    built = run_index(
        spark,
        "build",
        write_crawl(tmp_path / "m.jsonl", [*copies, script_only]),
        index,
        method="simhash",
    )
    m = index_store.open_index(str(index))
    assert (built.indexed, built.rejected, m.batches[0].rejected) == (6, 1, 1)  # no text: out
    rejected = spark.read.parquet(str(index / m.batches[0].dir / "rejects")).collect()
    assert [(r.doc_id, r.reason) for r in rejected] == [(script_only[0], EMPTY)]
    reader = IndexReader(spark, str(index), m)
    new = spark.createDataFrame([("new", text)], "doc_id string, text string")
    docs = new.select(
        "doc_id",
        exact_key_udf(SIMHASH)(F.col("text")).alias("exact_key"),
        F.lit(SIMHASH.fingerprint(text) - 2**64 * (SIMHASH.fingerprint(text) >= 2**63))
        .cast("bigint")
        .alias("fingerprint"),
    )
    every = match_index(reader, docs, max_distance=3, threshold=0.7, hot_bucket_size=1000)
    assert sorted(r.indexed_id for r in every.collect()) == [i for i, _ in copies]
    hub = match_index(reader, docs, max_distance=3, threshold=0.7, hot_bucket_size=3)
    assert [(r.indexed_id, r.distance) for r in hub.collect()] == [("mirror0", 0)]
