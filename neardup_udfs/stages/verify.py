"""The verify stage: keep candidate pairs that really are near duplicates."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DISTANCE, DOC_ID, FINGERPRINT, SIGNATURE, SIMILARITY, TEXT, A, B
from neardup_udfs.udfs import shingle_set_udf

__all__ = ["estimated_jaccard", "exact_jaccard", "hamming", "verify"]


def hamming(a: Column, b: Column) -> Column:
    """Hamming distance of two bigint fingerprints (popcount of the xor), Spark-native."""
    return F.bit_count(a.bitwiseXOR(b)).cast("int")


def estimated_jaccard(a: Column, b: Column) -> Column:
    """Fraction of equal slots of two MinHash signatures (``minhash.jaccard``), Spark-native."""
    equal = F.zip_with(a, b, lambda x, y: F.when(x == y, 1).otherwise(0))
    return F.aggregate(equal, F.lit(0), lambda acc, x: acc + x) / F.size(a)


def exact_jaccard(a: Column, b: Column) -> Column:
    """Jaccard similarity of two sets given as duplicate-free arrays, Spark-native.

    Two empty sets have similarity 0 (semblance's rule: no shingle, no evidence).
    """
    inter = F.size(F.array_intersect(a, b))
    union = F.size(a) + F.size(b) - inter
    return F.when(union > 0, inter / union).otherwise(F.lit(0.0))


def _pair_columns(pairs: DataFrame, values: DataFrame, col: str) -> DataFrame:
    va = values.select(F.col(DOC_ID).alias(A), F.col(col).alias("va"))
    vb = values.select(F.col(DOC_ID).alias(B), F.col(col).alias("vb"))
    return pairs.join(va, A).join(vb, B)


def verify(
    pairs: DataFrame,
    sketches: DataFrame,
    pipeline: Pipeline,
    *,
    k: int,
    threshold: float,
    verification: str,
    texts: DataFrame | None = None,
) -> DataFrame:
    """Verified edges: ``a, b`` and ``distance`` (SimHash) or ``similarity`` (MinHash).

    Notes:
        SimHash pairs are kept when their Hamming distance is <= k (always exact).
        MinHash pairs are kept when the Jaccard similarity is >= threshold: estimated from
        the signatures (``estimate``) or computed exactly on the word-shingle sets of both
        texts (``exact``, which needs ``texts``: ``doc_id, text``).
    """
    if pipeline.kind == "simhash":
        joined = _pair_columns(pairs, sketches, FINGERPRINT)
        scored = joined.select(A, B, hamming(F.col("va"), F.col("vb")).alias(DISTANCE))
        return scored.where(F.col(DISTANCE) <= k)
    if verification == "exact":
        if texts is None:
            raise ValueError("exact verification needs the texts")
        ends = pairs.select(F.col(A).alias(DOC_ID)).union(pairs.select(F.col(B).alias(DOC_ID)))
        sets = texts.join(ends.distinct(), DOC_ID, "left_semi").select(
            DOC_ID, shingle_set_udf(pipeline)(F.col(TEXT)).alias("__set")
        )
        joined = _pair_columns(pairs, sets, "__set")
        score = exact_jaccard(F.col("va"), F.col("vb"))
    else:
        joined = _pair_columns(pairs, sketches, SIGNATURE)
        score = estimated_jaccard(F.col("va"), F.col("vb"))
    scored = joined.select(A, B, score.cast("double").alias(SIMILARITY))
    return scored.where(F.col(SIMILARITY) >= threshold)
