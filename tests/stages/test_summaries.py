"""stages.summaries: the dedup report's driver side (the score summary, the shown samples,
the page) is bounded by the report, not by the outputs: the same Python memory for an
output of 10,000 cluster rows and one of 400,000 (clusters 40 times larger, as many
pairs)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.report import MEMBERS_SHOWN, report_page
from neardup_udfs.stages.samples import sample_clusters, shown_samples
from neardup_udfs.stages.summaries import score_summary

pytestmark = pytest.mark.spark


def _output(spark, n: int) -> tuple[DataFrame, DataFrame, DataFrame]:  # type: ignore[no-untyped-def]
    """``clusters`` of n rows in 100 clusters, the verified pairs (member, representative)
    and short texts."""
    size = n // 100
    rows = spark.range(n).select(
        F.format_string("d%08d", "id").alias("doc_id"),
        F.format_string("d%08d", (F.col("id") / size).cast("long") * size).alias("cluster_id"),
        (0.7 + (F.col("id") % 300) / 1000.0).alias("similarity"),
    )
    clusters = rows.select(
        "doc_id", "cluster_id", (F.col("doc_id") == F.col("cluster_id")).alias("is_representative"),
        "similarity",
    )  # fmt: skip
    verified = rows.where(F.col("doc_id") != F.col("cluster_id")).select(
        F.col("cluster_id").alias("a"), F.col("doc_id").alias("b"), "similarity"
    )
    texts = rows.select("doc_id", F.concat(F.lit("text of "), "doc_id").alias("text"))
    return clusters, verified, texts


def _report_peak(spark, out: Path, n: int) -> tuple[int, dict[str, object]]:  # type: ignore[no-untyped-def]
    """Peak Python memory (bytes) of the report stage's driver side for an output of n
    cluster rows, and the report it wrote."""
    clusters, verified, texts = _output(spark, n)
    sample_clusters(clusters, texts).write.parquet(str(out / "samples"))
    tracemalloc.start()
    try:
        scores = score_summary(verified, "similarity", "verified pairs")
        written = spark.read.parquet(str(out / "samples"))
        shown = shown_samples(written, MEMBERS_SHOWN).toArrow()
        report = {
            "counts": {"input": n, "verified": scores["count"]},
            "config": {"method": "minhash", "jaccard_threshold": 0.7},
            "scores": scores,
        }
        report_page(shown)(HadoopStorage(spark), str(out), report)
        peak = tracemalloc.get_traced_memory()[1] + shown.nbytes  # Arrow's buffers too
    finally:
        tracemalloc.stop()
    return peak, report


def test_report_memory_does_not_grow_with_the_output(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _report_peak(spark, tmp_path / "warm", 1_000)  # imports: not counted
    small, small_report = _report_peak(spark, tmp_path / "small", 10_000)
    large, large_report = _report_peak(spark, tmp_path / "large", 400_000)
    assert large <= 1.2 * small, (small, large)
    # the large one really was large: every pair counted, its clusters 4,000 strong
    assert large_report["scores"]["count"] == 400_000 - 100  # type: ignore[index]
    page = (tmp_path / "large" / "report.html").read_text()
    assert "4,000 documents" in page and "more member(s) not shown" in page
    assert json.dumps(small_report["scores"]) != json.dumps(large_report["scores"])


@pytest.mark.parametrize("metric", ["similarity", "distance"])
def test_summary_is_the_local_engine_s_under_any_partitioning(spark, metric: str) -> None:  # type: ignore[no-untyped-def]
    """One rule: Spark's summary (a partial summary per partition, merged) is the local
    engine's (``driver.outputs.score_summary_of``) of the same values, bit for bit, the
    total too: nulls, NaNs and infinities left out, values outside the bins clipped,
    however the rows are cut."""
    import numpy as np

    from neardup_udfs.driver.outputs import score_summary_of

    rng = np.random.default_rng(7)
    scale = 1.0 if metric == "similarity" else 12.0
    values = [float(v) for v in rng.uniform(-0.1, 1.1, 500) * scale]
    values += [0.125, 0.135, 2.5, float("nan"), float("inf"), -float("inf")]
    rows = [(v,) for v in values] + [(None,)]
    expected = score_summary_of(np.array([np.nan if r[0] is None else r[0] for r in rows]),
                                metric, "verified pairs")  # fmt: skip
    assert expected["count"] == 503
    for parts in (1, 3, 40):
        frame = spark.createDataFrame(rows, f"{metric} double").repartition(parts)
        assert score_summary(frame, metric, "verified pairs") == expected, parts
    empty = score_summary(spark.createDataFrame([], f"{metric} double"), metric, "none")
    assert empty == {"metric": metric, "source": "none", "count": 0, "low": None, "high": None,
                     "total": 0.0, "steps": [], "counts": []}  # fmt: skip
