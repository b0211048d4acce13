"""The samples stage: the clusters report.html shows side by side, with their members' texts."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType

from neardup_udfs.schemas import CLUSTER_ID, DOC_ID, IS_REPRESENTATIVE, TEXT
from neardup_udfs.udfs import utf8_lossy_udf

__all__ = ["sample_clusters"]


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
    characters; binary texts are decoded as UTF-8, each invalid byte as U+FFFD) and
    ``truncated``.

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
    chosen = top.select(CLUSTER_ID).unionByName(drawn.select(CLUSTER_ID))
    members = clusters.join(chosen, CLUSTER_ID, "left_semi")
    text = F.col(TEXT)
    joined = members.join(texts.select(DOC_ID, TEXT), DOC_ID)
    if isinstance(texts.schema[TEXT].dataType, BinaryType):
        joined = joined.withColumn(TEXT, utf8_lossy_udf()(text))  # the chosen texts only
    return (
        joined.withColumn("truncated", F.char_length(text) > max_chars)
        .withColumn(TEXT, F.substring(text, 1, max_chars))
        .orderBy(CLUSTER_ID, F.col(IS_REPRESENTATIVE).desc(), DOC_ID)
    )
