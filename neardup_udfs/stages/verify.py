"""The verify stage: keep candidate pairs that really are near duplicates."""

from __future__ import annotations

import math
from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StructField, StructType

from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DISTANCE, DOC_ID, FINGERPRINT, SIGNATURE, SIMILARITY, TEXT, A, B
from neardup_udfs.udfs import set_jaccard_fn, shingle_sets_fn

__all__ = ["estimate_margin", "estimated_jaccard", "hamming", "verify"]


def hamming(a: Column, b: Column) -> Column:
    """Hamming distance of two bigint fingerprints (popcount of the xor), Spark-native."""
    return F.bit_count(a.bitwiseXOR(b)).cast("int")


def estimated_jaccard(a: Column, b: Column) -> Column:
    """Fraction of equal slots of two MinHash signatures (``minhash.jaccard``), Spark-native."""
    equal = F.zip_with(a, b, lambda x, y: F.when(x == y, 1).otherwise(0))
    return F.aggregate(equal, F.lit(0), lambda acc, x: acc + x) / F.size(a)


def _pair_columns(pairs: DataFrame, values: DataFrame, col: str) -> DataFrame:
    va = values.select(F.col(DOC_ID).alias(A), F.col(col).alias("va"))
    vb = values.select(F.col(DOC_ID).alias(B), F.col(col).alias("vb"))
    return pairs.join(va, A).join(vb, B)


def estimate_margin(k: int, sds: float = 4.0) -> float:
    """Half-width of the band around the threshold where ``hybrid`` verification checks
    exactly: ``sds`` standard deviations of a k-slot estimate at its worst (J = 1/2)."""
    return sds * math.sqrt(0.25 / k)


def verify(
    pairs: DataFrame,
    sketches: DataFrame,
    pipeline: Pipeline,
    *,
    k: int,
    threshold: float,
    verification: str,
    texts: DataFrame | None = None,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> DataFrame:
    """Verified edges: ``a, b`` and ``distance`` (SimHash) or ``similarity`` (MinHash),
    with any other column of ``pairs`` (MinHash).

    Notes:
        SimHash pairs are kept when their Hamming distance is <= k (always exact).
        MinHash pairs are kept when the Jaccard similarity is >= threshold: estimated from
        the signatures (``estimate``), computed exactly on the word-shingle sets of both
        texts (``exact``, which needs ``texts``: ``doc_id, text``), or ``hybrid``: the
        estimate decides when it is more than :func:`estimate_margin` (4 standard
        deviations) away from the threshold, the exact Jaccard otherwise. Hybrid keeps the
        estimate's similarity for the pairs it decided; a wrong decision needs a 4-sigma
        estimation error (p < 1e-4 per pair). MinHash ``pairs`` that already carry
        ``similarity`` (the estimate, ``stages.candidates.scored_candidates``) are not
        joined to the signatures again. ``keep`` is given the intermediate frames read
        more than once (the job passes its cache's ``keep``, which persists them).
    """
    if pipeline.kind == "simhash":
        joined = _pair_columns(pairs, sketches, FINGERPRINT)
        scored = joined.select(A, B, hamming(F.col("va"), F.col("vb")).alias(DISTANCE))
        return scored.where(F.col(DISTANCE) <= k)
    if verification in ("exact", "hybrid") and texts is None:
        raise ValueError(f"{verification} verification needs the texts")
    if verification == "exact":
        return _exact(pairs.drop(SIMILARITY), pipeline, threshold, texts)
    if SIMILARITY in pairs.columns:  # scored where they were found (scored_candidates)
        estimated = pairs
    else:
        joined = _pair_columns(pairs, sketches, SIGNATURE)
        estimate = estimated_jaccard(F.col("va"), F.col("vb")).cast("double")
        estimated = joined.select(*pairs.columns, estimate.alias(SIMILARITY))
    if verification == "estimate":
        return estimated.where(F.col(SIMILARITY) >= threshold)
    estimated = keep(estimated)
    margin = estimate_margin(pipeline.param("k"))
    sure = estimated.where(F.col(SIMILARITY) >= threshold + margin)
    near = (F.col(SIMILARITY) >= threshold - margin) & (F.col(SIMILARITY) < threshold + margin)
    unsure = estimated.where(near).drop(SIMILARITY)
    return sure.unionByName(_exact(unsure, pipeline, threshold, texts))


def _exact(
    pairs: DataFrame, pipeline: Pipeline, threshold: float, texts: DataFrame | None
) -> DataFrame:
    assert texts is not None
    # only the texts of documents in some pair travel to the join
    ends = pairs.select(F.col(A).alias(DOC_ID)).union(pairs.select(F.col(B).alias(DOC_ID)))
    needed = texts.join(ends.distinct(), DOC_ID, "left_semi").select(DOC_ID, TEXT)
    # each document shingled once, whatever its number of pairs; the pairs get the sets
    sets = needed.mapInArrow(shingle_sets_fn(pipeline), f"{DOC_ID} string, shingles array<bigint>")
    joined = _pair_columns(pairs, sets, "shingles")
    keep = pairs.drop(SIMILARITY).columns
    schema = StructType(
        [*(joined.schema[c] for c in keep), StructField(SIMILARITY, DoubleType(), False)]
    )
    scored = joined.mapInArrow(set_jaccard_fn(keep), schema)
    return scored.where(F.col(SIMILARITY) >= threshold)
