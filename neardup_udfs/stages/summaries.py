"""Small aggregates of large frames, computed by Spark, for the report: whatever the size of
an output, the driver collects a bounded number of rows."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup_udfs.driver.outputs import SUMMARY, merged_scores, partial_scores_fn

__all__ = ["score_summary"]


def score_summary(scores: DataFrame, metric: str, source: str) -> dict[str, Any]:
    """The summary of column ``metric`` (``similarity`` or ``distance``) of ``scores`` that
    report.json stores as ``scores`` (``report.data.Scores``: the count, lowest, highest
    and total of its finite values and how many fall in each bin), the one rule of the
    local engine (``driver.outputs``) applied per partition. One row per partition
    reaches the driver."""
    values = scores.select(F.col(metric).cast("double").alias(metric))
    partials = values.mapInArrow(partial_scores_fn(metric), f"{SUMMARY} string").toArrow()
    return merged_scores(partials.column(SUMMARY).to_pylist(), metric, source)
