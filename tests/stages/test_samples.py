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
