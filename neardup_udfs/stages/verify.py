"""The verify stage: keep candidate pairs that really are near duplicates."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType

from neardup_udfs.driver.batches import sorted_jaccard_fn
from neardup_udfs.driver.settings import Checks
from neardup_udfs.kernels.minhash import estimate_margin
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import (
    BAND,
    BUCKET,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    SIGNATURE,
    SIMILARITY,
    TEXT,
    A,
    B,
)

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


def verify(
    pairs: DataFrame,
    sketches: DataFrame,
    pipeline: Pipeline,
    *,
    max_distance: int,
    threshold: float,
    verification: str,
    texts: DataFrame | None = None,
    prepared: bool = True,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> DataFrame:
    """Verified edges: ``a, b`` and ``distance`` (SimHash) or ``similarity`` (MinHash, with
    ``band`` when ``pairs`` has it).

    Notes:
        SimHash pairs are kept when their Hamming distance is <= ``max_distance`` (always
        exact; its old name ``k=`` still works, with a DeprecationWarning); pairs that
        carry ``distance`` (``stages.candidates.scored_candidates``) keep ``band`` and are
        not joined to the fingerprints again.
        MinHash pairs are kept when the Jaccard similarity is >= threshold: estimated from
        the signatures (``estimate``), computed exactly on the word-shingle sets of both
        texts (``exact``, which needs ``texts``: ``doc_id, text``, the prepared text of
        ``stages.normalize.prepare``, or with ``prepared=False`` the input text, normalized
        where it is checked), or ``hybrid``: the
        estimate decides when it is more than :func:`estimate_margin` (4 standard
        deviations) away from the threshold, the exact Jaccard otherwise (the bounds of
        ``driver.settings.Checks``, which the one-process core reads too). Hybrid keeps the
        estimate's similarity for the pairs it decided; a wrong decision needs a 4-sigma
        estimation error (p < 1e-4 per pair). MinHash ``pairs`` that already carry
        ``similarity`` (the estimate, ``stages.candidates.scored_candidates``) are not
        joined to the signatures again, and their exact checks happen per bucket
        (``schemas.BUCKET``): each text travels once per bucket with pairs to check, not
        once per pair. ``keep`` is given the intermediate frames read more than once (the
        job passes its cache's ``keep``, which persists them).
    """
    if pipeline.kind == "simhash" and DISTANCE in pairs.columns:  # scored where found
        return pairs.where(F.col(DISTANCE) <= max_distance).select(A, B, BAND, DISTANCE)
    if pipeline.kind == "simhash":
        joined = _pair_columns(pairs, sketches, FINGERPRINT)
        scored = joined.select(A, B, hamming(F.col("va"), F.col("vb")).alias(DISTANCE))
        return scored.where(F.col(DISTANCE) <= max_distance)
    if verification in ("exact", "hybrid") and texts is None:
        raise ValueError(f"{verification} verification needs the texts")
    carry = [BAND] if BAND in pairs.columns else []
    if verification == "exact":
        return _exact(pairs, pipeline, threshold, texts, carry, prepared)
    if SIMILARITY in pairs.columns:  # scored where they were found (scored_candidates)
        estimated = pairs
    else:
        joined = _pair_columns(pairs, sketches, SIGNATURE)
        estimate = estimated_jaccard(F.col("va"), F.col("vb")).cast("double")
        estimated = joined.select(*pairs.columns, estimate.alias(SIMILARITY))
    edges = [A, B, *carry, SIMILARITY]
    checks = Checks.of(verification, threshold, pipeline.param("k"))  # k: signature slots
    sure = F.col(SIMILARITY) >= checks.sure
    if checks.check == checks.sure:  # nothing to check exactly (estimate)
        return estimated.where(sure).select(*edges)
    estimated = keep(estimated)
    unsure = estimated.where((F.col(SIMILARITY) >= checks.check) & ~sure)
    exact = _exact(unsure, pipeline, threshold, texts, carry, prepared)
    return estimated.where(sure).select(*edges).unionByName(exact)


def _exact(
    pairs: DataFrame,
    pipeline: Pipeline,
    threshold: float,
    texts: DataFrame | None,
    carry: list[str],
    prepared: bool,
) -> DataFrame:
    """``a, b, *carry, similarity`` of the ``pairs`` whose exact Jaccard is >= threshold.
    Pairs are checked in groups: the bucket that found them when they carry
    ``schemas.BUCKET``, else their ``a``; a group's texts travel to it once, and the group's
    rows (its members, then its pairs, sorted by group in each partition) are checked as
    they stream (``driver.batches.sorted_jaccard_fn``)."""
    assert texts is not None
    group = list(BUCKET) if all(c in pairs.columns for c in BUCKET) else [A]
    by_group = [*group, *(c for c in carry if c not in group)]
    ends = pairs.select(*by_group, F.col(A).alias(DOC_ID)).union(
        pairs.select(*by_group, F.col(B).alias(DOC_ID))
    )
    none = F.lit(None).cast("string")
    members = ends.distinct().join(texts.select(DOC_ID, TEXT), DOC_ID)
    rows = members.select(*by_group, DOC_ID, TEXT, none.alias(B)).unionByName(
        pairs.select(*by_group, F.col(A).alias(DOC_ID), none.alias(TEXT), B)
    )
    schema = StructType(
        [
            StructField(A, StringType(), False),
            StructField(B, StringType(), False),
            *(pairs.schema[c] for c in carry),
            StructField(SIMILARITY, DoubleType(), False),
        ]
    )
    by_group_sorted = rows.repartition(*group).sortWithinPartitions(*group)
    checked = sorted_jaccard_fn(pipeline, group, carry, prepared=prepared)
    scored = by_group_sorted.mapInArrow(checked, schema)
    return scored.where(F.col(SIMILARITY) >= threshold)
