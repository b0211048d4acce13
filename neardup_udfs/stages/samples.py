"""The samples stage: the clusters report.html shows side by side, with their members' texts."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType

from neardup_udfs.driver.samples import chosen_clusters_fn, shown_fn
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
        The clusters are ``driver.samples.chosen_clusters``' choice (the ``largest``
        biggest, then ``sample`` others in a hash order of ``seed`` and the id): each
        partition of the clusters' sizes keeps what could be chosen, and one task chooses
        from what they kept. Only the chosen members' texts are joined.
    """
    sizes = clusters.groupBy(CLUSTER_ID).agg(F.count(F.lit(1)).alias(CLUSTER_SIZE))
    schema = f"{CLUSTER_ID} string, {CLUSTER_SIZE} bigint not null"
    kept = sizes.mapInArrow(chosen_clusters_fn(largest, largest + sample, seed), schema)
    chosen = kept.repartition(1).mapInArrow(chosen_clusters_fn(largest, sample, seed), schema)
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
    """The rows of ``samples`` (``sample_clusters``' output) report.html shows
    (``driver.samples.shown_mask``: each cluster's representative and its ``members`` least
    similar other members), so the driver collects a bounded number of rows whatever the
    clusters' sizes. Each cluster is decided in one task from its rows' ids and scores."""
    names = samples.columns
    metric = SIMILARITY if SIMILARITY in names else DISTANCE if DISTANCE in names else None
    keys = samples.select(CLUSTER_ID, DOC_ID, IS_REPRESENTATIVE, *([metric] if metric else []))
    shown = keys.groupBy(CLUSTER_ID).applyInArrow(
        shown_fn(metric, members), f"{CLUSTER_ID} string, {DOC_ID} string"
    )
    return samples.join(shown, [CLUSTER_ID, DOC_ID], "left_semi")
