"""stages.samples: the sampled clusters are truncated and deterministic."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

pytestmark = pytest.mark.spark


def test_sample_clusters_truncates_and_is_deterministic(spark) -> None:  # type: ignore[no-untyped-def]
    from neardup_udfs.stages.samples import sample_clusters

    rows = [(f"d{i}", f"c{i // 3}", i % 3 == 0, 1.0) for i in range(30)] + [
        ("solo", "solo", True, 1.0)
    ]
    clusters = spark.createDataFrame(
        rows, "doc_id string, cluster_id string, is_representative boolean, similarity double"
    )
    texts = spark.createDataFrame(
        [(r[0], "x" * (5 + int(r[0][1:] or 0) if r[0] != "solo" else 1)) for r in rows],
        "doc_id string, text string",
    )
    got = sample_clusters(clusters, texts, largest=2, sample=3, max_chars=10).collect()
    again = sample_clusters(
        clusters.repartition(7), texts.repartition(3), largest=2, sample=3, max_chars=10
    ).collect()
    assert got == again
    shown = sorted({r.cluster_id for r in got})
    assert len(shown) == 5 and "solo" not in shown and {"c0", "c1"} <= set(shown)
    for r in got:
        full = 5 + int(r.doc_id[1:])
        assert r.text == "x" * min(full, 10) and r.truncated == (full > 10)
    binary = texts.select("doc_id", F.col("text").cast("binary").alias("text"))  # text input
    decoded = sample_clusters(clusters, binary, largest=2, sample=3, max_chars=10).collect()
    assert [(r.doc_id, r.text, r.truncated) for r in decoded] == [
        (r.doc_id, r.text, r.truncated) for r in got
    ]


def test_spark_samples_and_shown_rows_are_the_core_s_under_any_partitioning(spark) -> None:  # type: ignore[no-untyped-def]
    """sample_clusters chooses the clusters driver.samples.chosen_clusters chooses of the
    whole, and shown_samples keeps the rows shown_mask keeps, however the clusters are
    partitioned (the partitions' choices merged in one task)."""
    import pyarrow as pa

    from neardup_udfs.driver.outputs import sample_table, shown_table
    from neardup_udfs.stages.samples import sample_clusters, shown_samples

    rows = [
        (f"d{c}-{m}", f"c{c}", m == 0, round(1.0 - 0.01 * ((c * 7 + m * 3) % 11), 2))
        for c in range(60)
        for m in range(2 + c % 5)
    ] + [("solo", "solo", True, None)]
    schema = "doc_id string, cluster_id string, is_representative boolean, similarity double"
    clusters = spark.createDataFrame(rows, schema)
    texts = spark.createDataFrame(
        [(r[0], "text of " + r[0]) for r in rows], "doc_id string, text string"
    )
    local_clusters = pa.table(
        {name: [r[i] for r in rows] for i, name in enumerate(clusters.columns)},
        schema=clusters.toArrow().schema,
    )
    local_texts = texts.toArrow()
    for largest, sample, seed in ((2, 3, 0), (0, 7, 5), (4, 0, 1)):
        want = sample_table(local_clusters, local_texts, largest=largest, sample=sample, seed=seed)
        for parts in (3, 8):
            got = sample_clusters(
                clusters.repartition(parts), texts, largest=largest, sample=sample, seed=seed
            ).toArrow()
            assert got.to_pylist() == want.to_pylist(), (largest, sample, seed, parts)
            shown = shown_samples(spark.createDataFrame(got).repartition(parts), 2).toArrow()
            key = ["cluster_id", "doc_id"]
            assert sorted(shown.select(key).to_pylist(), key=str) == sorted(
                shown_table(want, 2).select(key).to_pylist(), key=str
            )
