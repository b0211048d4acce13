"""Small aggregates of large frames, computed by Spark, for the report: whatever the size of
an output, the driver collects a bounded number of rows."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup_udfs.report import SIMILARITY_STEPS

__all__ = ["score_summary"]


def score_summary(scores: DataFrame, metric: str, source: str) -> dict[str, Any]:
    """The summary of column ``metric`` (``similarity`` or ``distance``) of ``scores`` that
    report.json stores as ``scores`` (``report.data.Scores.from_json`` reads it): the count,
    lowest, highest and total of its finite values and, per bin, how many fall in it: a
    similarity rounds to ``1 / SIMILARITY_STEPS`` (clipped to [0, 1]), a distance to an
    integer (at least 0), half to even as numpy does. At most ``SIMILARITY_STEPS + 1``
    rows reach the driver (a distance: one per distinct distance)."""
    v = F.col(metric).cast("double")
    finite = scores.select(v.alias("v")).where(
        v.isNotNull() & ~F.isnan(v) & (F.abs(v) != F.lit(float("inf")))
    )
    if metric == "distance":
        step = F.greatest(F.rint("v"), F.lit(0.0))
    else:
        step = F.least(F.greatest(F.rint(F.col("v") * SIMILARITY_STEPS), F.lit(0.0)),
                       F.lit(float(SIMILARITY_STEPS)))  # fmt: skip
    bins = finite.groupBy(step.cast("long").alias("step")).agg(
        F.count(F.lit(1)).alias("n"), F.min("v").alias("lo"), F.max("v").alias("hi"),
        F.sum("v").alias("total"),
    )  # fmt: skip
    rows = sorted(bins.collect(), key=lambda r: r["step"])
    count = sum(int(r["n"]) for r in rows)
    return {
        "metric": metric,
        "source": source,
        "count": count,
        "low": min(float(r["lo"]) for r in rows) if rows else None,
        "high": max(float(r["hi"]) for r in rows) if rows else None,
        "total": float(sum(float(r["total"]) for r in rows)),
        "steps": [int(r["step"]) for r in rows],
        "counts": [int(r["n"]) for r in rows],
    }
