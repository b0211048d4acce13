"""The candidates stage: band keys grouped into buckets, buckets into candidate pairs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.driver.batches import first_band_pairs_fn, first_table_pairs_fn
from neardup_udfs.driver.buckets import PLACED, placed_fn
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import (
    BAND,
    BAND_KEYS,
    CHUNK,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    KEY,
    SIGNATURE,
    SIMILARITY,
    A,
    B,
)
from neardup_udfs.udfs import band_keys_udf

__all__ = [
    "Candidates",
    "band_keys",
    "candidates",
    "first_band_counts",
    "scored_candidates",
    "simhash_table_keys",
]


@dataclass(frozen=True)
class Candidates:
    pairs: DataFrame  # a, b (a < b), each once; scored_candidates adds BUCKET, similarity
    hot_buckets: DataFrame  # band, key, size: buckets handled as stars
    buckets: DataFrame  # band, key, ids (sorted), size: the buckets of 2+ members


def _to_signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def simhash_table_keys(fp: Column, scheme: Scheme | SampledScheme) -> Column:
    """The table keys of a bigint fingerprint under ``scheme`` (``kernels.hamming_tables``),
    as an array of bigint: table ``t``'s key at position ``t``, equal to
    ``scheme.keys(fp)[t]`` (ditto's block values for its k + 1 blocks)."""
    keys = []
    for table in scheme.parts:
        parts = [
            F.shiftleft(
                F.shiftrightunsigned(fp, shift).bitwiseAND(
                    F.lit(_to_signed((1 << width) - 1)).cast("bigint")
                ),
                offset,
            )
            for shift, width, offset in table
        ]
        key = parts[0]
        for part in parts[1:]:
            key = key.bitwiseOR(part)
        keys.append(key)
    return F.array(*keys)


def band_keys(
    sketches: DataFrame, pipeline: Pipeline, scheme: Scheme | SampledScheme | None
) -> DataFrame:
    """``doc_id, band, key``: one row per band (MinHash) or table (SimHash: ``scheme``'s
    tables; the band is the table's index).

    Notes:
        SimHash: with a guaranteed ``Scheme``, two fingerprints within the scheme's k bits
        share the key of at least one table (pigeonhole), so candidates have no false
        negatives at distance <= k; a ``SampledScheme`` trades that for bounded keys.
    """
    if pipeline.kind == "simhash":
        assert scheme is not None, "SimHash keys need a Hamming scheme"
        if pipeline.preset.input == "text":
            # A text with no features (no tokens, or fewer words than a shingle) has the
            # SimHash 0 (ditto gives every text a feature: 0 only by a 2^-64 chance); like
            # MinHash's empty set it is no evidence of similarity: no keys, exact duplicates
            # only. An image's pHash of 0 (a flat image) is a real value and keeps its keys.
            sketches = sketches.where(F.col(FINGERPRINT) != 0)
        keys = simhash_table_keys(F.col(FINGERPRINT), scheme)
    else:
        # A text too short to shingle has the empty-set signature (every slot all ones, -1
        # as bigint); it is no evidence of similarity (semblance's Similarity gives 0), so
        # such documents get no band keys and can only be exact duplicates.
        empty = F.forall(F.col(SIGNATURE), lambda x: x == F.lit(-1))
        sketches = sketches.where(~empty)
        keys = (
            F.col(BAND_KEYS)  # computed with the signature (stages.fingerprint)
            if BAND_KEYS in sketches.columns
            else band_keys_udf(pipeline)(F.col(SIGNATURE))
        )
    return sketches.select(DOC_ID, F.posexplode(keys).alias(BAND, KEY))


def candidates(
    keys: DataFrame,
    hot_bucket_size: int,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> Candidates:
    """Distinct pairs ``a < b`` of documents sharing a (band, key) bucket: the bucket rule
    made distinct over the corpus, which :func:`scored_candidates` (what the runs use)
    produces without a shuffle of every pair; tests hold one to the other.

    Notes:
        A bucket with more than ``hot_bucket_size`` members is "hot": instead of all its
        n(n-1)/2 pairs it contributes the n-1 pairs (hub, member), hub = its smallest id,
        so the pair count stays linear. Members that are near each other but not near the hub
        can then only meet through another band (a documented recall trade-off; exact
        duplicates never reach this stage). ``keep`` is given ``buckets``, which the pairs,
        the hot buckets and the per-band counts all read (the job passes its cache's
        ``keep``, which persists it).
    """
    grouped = keys.groupBy(BAND, KEY).agg(F.array_sort(F.collect_list(DOC_ID)).alias("ids"))
    buckets = grouped.select(BAND, KEY, "ids", F.size("ids").alias("size"))
    buckets = keep(buckets.where(F.col("size") > 1))
    pairs = _bucket_pairs(buckets, hot_bucket_size).select(A, B)
    hot_buckets = buckets.where(F.col("size") > hot_bucket_size).select(BAND, KEY, "size")
    return Candidates(pairs.distinct(), hot_buckets, buckets)


def scored_candidates(
    sketches: DataFrame,
    pipeline: Pipeline,
    hot_bucket_size: int,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
    scheme: Scheme | SampledScheme | None = None,
) -> Candidates:
    """Candidates, each pair once and already scored: ``pairs`` is ``a, b`` (``a < b``),
    ``band``, ``key`` and ``chunk`` (the bucket, or hot bucket's chunk, of the first band
    that produces the pair: ``schemas.BUCKET``) and the score: MinHash ``similarity`` (the
    signature estimate, as ``verify.estimated_jaccard``), SimHash ``distance`` (the exact
    Hamming distance; ``band`` is the table of ``scheme``, which SimHash needs).

    Notes:
        The same pairs as :func:`candidates` of ``band_keys(sketches)``, hot buckets
        included, without making them distinct: a bucket keeps only the pairs it produces
        first (``kernels.band_pairs``), and scores them from the members' sketches, which
        travel once per bucket of two or more members, never per pair. A hot bucket's members
        travel in chunks of ``hot_bucket_size``, each with the hub, so no group is larger
        (``driver.buckets``: the rule the one-process core applies too).
        ``keep`` is given ``buckets`` (read by the pairs and the hot-bucket report).
    """
    if pipeline.kind == "simhash":
        assert scheme is not None, "SimHash keys need a Hamming scheme"
        sketch, score = FINGERPRINT, "distance"
        first_pairs = first_table_pairs_fn(scheme)
    else:
        bands, rows = pipeline.param("bands"), pipeline.param("rows")
        sketch, score = SIGNATURE, "equal"
        first_pairs = first_band_pairs_fn(bands, rows)
    keys = band_keys(sketches, pipeline, scheme)
    grouped = keys.groupBy(BAND, KEY).agg(F.array_sort(F.collect_list(DOC_ID)).alias("ids"))
    buckets = grouped.select(BAND, KEY, "ids", F.size("ids").alias("size"))
    buckets = keep(buckets.where(F.col("size") > 1))
    hot = F.col("size") > hot_bucket_size
    # each member in its group, hot buckets in chunks with the hub again (driver.buckets)
    placed = buckets.select(BAND, KEY, "ids", "size").mapInArrow(
        placed_fn(hot_bucket_size), PLACED
    )
    member = buckets.where(hot).select(BAND, F.posexplode("ids").alias("pos", DOC_ID))
    roles = member.groupBy(DOC_ID).agg(
        F.collect_list(F.struct(BAND, (F.col("pos") == 0).alias("hub"))).alias("hot")
    )
    sketched = sketches.select(DOC_ID, sketch)
    payload = placed.join(sketched, DOC_ID).join(roles, DOC_ID, "left")
    groups = payload.groupBy(BAND, KEY, CHUNK).agg(
        F.first("star").alias("star"),
        F.collect_list(F.struct(DOC_ID, sketch, "hot")).alias("members"),
    )
    found = groups.select(BAND, KEY, CHUNK, "star", "members").mapInArrow(
        first_pairs, f"a string, b string, band int, key bigint, chunk int, {score} int"
    )
    if pipeline.kind == "simhash":
        scored = F.col(score).alias(DISTANCE)
    else:
        width = pipeline.param("k")
        scored = (F.col(score) / F.lit(width)).cast("double").alias(SIMILARITY)
    pairs = found.select(A, B, BAND, KEY, CHUNK, scored)
    hot_buckets = buckets.where(hot).select(BAND, KEY, "size")
    return Candidates(pairs, hot_buckets, buckets)


def first_band_counts(candidate_pairs: DataFrame, verified: DataFrame) -> DataFrame:
    """``band, candidates, verified`` for every band that produced a pair: the pairs whose
    first producing band it is (``scored_candidates``), and how many of those are verified
    (both frames carry ``band``)."""
    produced = candidate_pairs.select(BAND, F.lit(1).alias("c"), F.lit(0).alias("v"))
    kept = verified.select(BAND, F.lit(0).alias("c"), F.lit(1).alias("v"))
    per_band = produced.unionByName(kept).groupBy(BAND)
    return per_band.agg(F.sum("c").alias("candidates"), F.sum("v").alias("verified"))


def _bucket_pairs(buckets: DataFrame, hot_bucket_size: int) -> DataFrame:
    """``band, a, b``: every pair a bucket produces (its star, when hot); not distinct."""
    ids, size = F.col("ids"), F.col("size")
    star = F.transform(F.slice(ids, 2, size - 1), lambda y: F.struct(ids[0].alias(A), y.alias(B)))
    every = F.flatten(
        F.transform(
            ids,
            lambda x, i: F.transform(
                F.slice(ids, i + 2, F.greatest(size - i - 1, F.lit(1))),
                lambda y: F.struct(x.alias(A), y.alias(B)),
            ),
        )
    )
    pair = F.explode(F.when(size > hot_bucket_size, star).otherwise(every)).alias("pair")
    exploded = buckets.select(BAND, pair)
    return exploded.select(BAND, F.col("pair." + A).alias(A), F.col("pair." + B).alias(B))
