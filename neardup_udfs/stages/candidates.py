"""The candidates stage: band keys, exploded, self-joined into candidate pairs."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.kernels.hamming_index import block_bounds
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import BAND, DOC_ID, FINGERPRINT, KEY, SIGNATURE, A, B
from neardup_udfs.udfs import band_keys_udf

__all__ = ["Candidates", "band_keys", "candidates"]


@dataclass(frozen=True)
class Candidates:
    pairs: DataFrame  # a, b (a < b), distinct
    hot_buckets: DataFrame  # band, key, size: buckets handled as stars


def _to_signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _simhash_blocks(fp: Column, k: int) -> Column:
    """ditto's k+1 blocks of a bigint fingerprint, as an array of bigint."""
    bounds = block_bounds(k)
    blocks = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        mask = F.lit(_to_signed((1 << (hi - lo)) - 1)).cast("bigint")
        blocks.append(F.shiftrightunsigned(fp, lo).bitwiseAND(mask))
    return F.array(*blocks)


def band_keys(sketches: DataFrame, pipeline: Pipeline, k: int) -> DataFrame:
    """``doc_id, band, key``: one row per band (MinHash) or block (SimHash, k+1 blocks).

    Notes:
        SimHash: two fingerprints within k bits agree on at least one of ditto's k+1 blocks
        (pigeonhole), so candidates have no false negatives at distance <= k.
    """
    if pipeline.kind == "simhash":
        keys = _simhash_blocks(F.col(FINGERPRINT), k)
    else:
        # A text too short to shingle has the empty-set signature (every slot all ones, -1
        # as bigint); it is no evidence of similarity (semblance's Similarity gives 0), so
        # such documents get no band keys and can only be exact duplicates.
        empty = F.forall(F.col(SIGNATURE), lambda x: x == F.lit(-1))
        sketches = sketches.where(~empty)
        keys = band_keys_udf(pipeline)(F.col(SIGNATURE))
    return sketches.select(DOC_ID, F.posexplode(keys).alias(BAND, KEY))


def candidates(keys: DataFrame, hot_bucket_size: int) -> Candidates:
    """Distinct pairs ``a < b`` of documents sharing a (band, key) bucket.

    Notes:
        A bucket with more than ``hot_bucket_size`` members is "hot": instead of all its
        n(n-1)/2 pairs it contributes the n-1 pairs (hub, member), hub = its smallest id,
        so the pair count stays linear. Members that are near each other but not near the hub
        can then only meet through another band (a documented recall trade-off; exact
        duplicates never reach this stage).
    """
    sizes = keys.groupBy(BAND, KEY).agg(F.count("*").alias("size"), F.min(DOC_ID).alias("hub"))
    sized = keys.join(sizes.where(F.col("size") > 1), [BAND, KEY])
    normal = sized.where(F.col("size") <= hot_bucket_size).select(BAND, KEY, DOC_ID)
    left = normal.select(BAND, KEY, F.col(DOC_ID).alias(A))
    right = normal.select(BAND, KEY, F.col(DOC_ID).alias(B))
    pairs = left.join(right, [BAND, KEY]).where(F.col(A) < F.col(B)).select(A, B)
    hot = sized.where(F.col("size") > hot_bucket_size)
    stars = hot.where(F.col(DOC_ID) != F.col("hub")).select(
        F.col("hub").alias(A), F.col(DOC_ID).alias(B)
    )
    hot_buckets = hot.select(BAND, KEY, "size").distinct()
    return Candidates(pairs.unionByName(stars).distinct(), hot_buckets)
