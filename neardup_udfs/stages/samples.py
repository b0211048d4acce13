"""The samples stage: the clusters report.html shows side by side, with their members' texts."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType

from neardup_udfs.schemas import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    DISTANCE,
    DOC_ID,
    IS_REPRESENTATIVE,
    SIMILARITY,
    TEXT,
)
from neardup_udfs.udfs import utf8_lossy_udf

__all__ = ["sample_clusters", "shown_samples"]


def sample_clusters(
    clusters: DataFrame,
    texts: DataFrame,
    *,
    largest: int = 5,
    sample: int = 5,
    seed: int = 0,
    max_chars: int = 20_000,
) -> DataFrame:
    """Every member of up to ``largest + sample`` clusters of two or more documents, with
    its text: ``clusters``' columns plus ``text`` (a string of at most ``max_chars``
    characters; binary texts are decoded as UTF-8, one U+FFFD per maximal invalid subsequence),
    ``truncated`` and ``cluster_size`` (the cluster's members in ``clusters``, all of them,
    so the report shows sizes without reading clusters/).

    Notes:
        The clusters are the ``largest`` biggest (ties: smallest cluster id) and ``sample``
        others ordered by ``xxhash64(seed, cluster_id)``: a function of the clusters alone,
        the same on every run, partitioning and machine. Only ids and sizes are sorted (a
        top-k, never a total sort), and only the chosen members' texts are joined.
    """
    sizes = clusters.groupBy(CLUSTER_ID).count().where(F.col("count") > 1)
    top = sizes.orderBy(F.col("count").desc(), CLUSTER_ID).limit(largest)
    rest = sizes.join(top, CLUSTER_ID, "left_anti")
    drawn = rest.orderBy(F.xxhash64(F.lit(seed), F.col(CLUSTER_ID)), CLUSTER_ID).limit(sample)
    chosen = top.unionByName(drawn).select(CLUSTER_ID, F.col("count").alias(CLUSTER_SIZE))
    members = clusters.join(F.broadcast(chosen), CLUSTER_ID)
    text = F.col(TEXT)
    joined = members.join(texts.select(DOC_ID, TEXT), DOC_ID)
    if isinstance(texts.schema[TEXT].dataType, BinaryType):
        joined = joined.withColumn(TEXT, utf8_lossy_udf()(text))  # the chosen texts only
    return (
        joined.withColumn("truncated", F.char_length(text) > max_chars)
        .withColumn(TEXT, F.substring(text, 1, max_chars))
        .orderBy(CLUSTER_ID, F.col(IS_REPRESENTATIVE).desc(), DOC_ID)
    )


def shown_samples(samples: DataFrame, members: int) -> DataFrame:
    """The rows of ``samples`` (``sample_clusters``' output) report.html shows: each
    cluster's representative and its ``members`` least similar other members (by
    ``similarity`` ascending or ``distance`` descending, unscored last, then id), so the
    driver collects a bounded number of rows whatever the clusters' sizes."""
    score = SIMILARITY if SIMILARITY in samples.columns else DISTANCE
    if score not in samples.columns:
        far = [F.col(DOC_ID)]
    elif score == SIMILARITY:
        far = [F.col(score).asc_nulls_last(), F.col(DOC_ID)]
    else:
        far = [F.col(score).desc_nulls_last(), F.col(DOC_ID)]
    rank = F.row_number().over(Window.partitionBy(CLUSTER_ID, IS_REPRESENTATIVE).orderBy(*far))
    kept = F.col(IS_REPRESENTATIVE) & (F.col("__rank") == 1)
    return (
        samples.withColumn("__rank", rank)
        .where(kept | (~F.col(IS_REPRESENTATIVE) & (F.col("__rank") <= members)))
        .drop("__rank")
    )
