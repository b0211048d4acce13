"""Keep one copy of each repeated passage (the boilerplate job's ``keep = "one"``).

The regions are those of ``stages.winnowing.cover_regions`` (``Index.cover``). Each region of
a document has a *signature*: the set of the fingerprint hashes of its run (the qualifying
fingerprints from its start to its end). Regions with equal signatures are copies of one
passage. A signature is *maximal* when no region (of any document, of the same group when
there are groups) has a signature that strictly contains it. For each maximal signature its
*holders* are the documents with a region of that signature, and its *keeper* is the holder
first by the representative rule (:func:`representative_keys`), or none when it has more than
``max_keep_docs`` holders. A region survives iff its signature is maximal and its document
is the keeper; every other region is removed (a non-maximal region's content lives inside a
maximal region, which survives in its keeper). Two maximal signatures that share a hash
(neither contains the other: both are maximal) *overlap*: each survives once, so the content
they share may survive twice.

The same signatures name the passages of ``boilerplate_top/`` (:func:`passage_docs`): a
document holds a passage when one of its regions' signatures contains the passage's.

Every function is DataFrame -> DataFrame, runs on DataFrame operations only (no Python per
row, nothing collected but counts) and gives the same rows whatever the partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.driver.settings import rule_fields
from neardup_udfs.schemas import DOC_ID, TEXT
from neardup_udfs.stages.cluster import rule_key
from neardup_udfs.stages.winnowing import cover_regions

__all__ = [
    "Passages",
    "keep_counts",
    "keep_one",
    "passage_docs",
    "region_signatures",
    "representative_keys",
]

SIGNATURE = "signature"
RANK = "rank"


def region_signatures(
    fps: DataFrame,
    freq: DataFrame,
    kgram_bytes: int,
    min_docs: int,
    min_run: int,
    group: str | None = None,
) -> DataFrame:
    """``doc_id [, group], start, length, signature``: the regions of ``cover_regions`` (same
    arguments, so exactly ``Index.cover``) with their signatures.

    Notes:
        ``signature`` is the sorted array of the distinct hashes of the region's run: the
        consecutive (by ``j``) fingerprints held by at least ``min_docs`` documents (``freq``
        from ``doc_freq`` with the same ``group``), from pos ``start`` to
        ``start + length - kgram_bytes``. A run of ``n >= max(min_run, 1)`` fingerprints is
        a region. ``group`` (when given, a column of ``fps``) is carried along.
    """
    return cover_regions(fps, freq, kgram_bytes, min_docs, min_run, group, signatures=True)


def representative_keys(docs: DataFrame, rule: str, order_col: str | None = None) -> DataFrame:
    """``doc_id, rank``: each document's place in the representative ``rule``'s order as one
    struct, the smallest first: ``min_id`` by id; ``earliest`` by ``order_col`` ascending,
    nulls last, then id; ``longest`` by the UTF-8 bytes of ``text``, most first, then id.
    Ids compare byte-wise (as Spark orders strings). ``docs`` has ``doc_id`` and whatever
    the rule reads (``order_col`` or ``text``)."""
    rule_fields(rule)  # ValueError naming an unknown rule
    if rule == "earliest" and not order_col:
        raise ValueError("representative rule 'earliest' needs order_col")
    order = F.col(order_col) if rule == "earliest" and order_col else F.lit(None)
    length = F.octet_length(F.col(TEXT)).cast("bigint") if rule == "longest" else F.lit(None)
    keyed = docs.select(DOC_ID, order.alias("__order"), length.alias("__length"))
    return keyed.select(DOC_ID, rule_key(rule).alias(RANK))


@dataclass(frozen=True)
class Passages:
    """What :func:`keep_one` decided.

    Attributes:
        regions: ``doc_id, start, length [, group], kept_by, kept, holders, maximal``: every
            input region; ``kept_by`` the keeper of its signature (null when it has none:
            not maximal, or more than ``max_keep_docs`` holders), ``kept`` whether this copy
            survives (its document is ``kept_by``), ``holders`` the documents holding its
            signature, ``maximal`` whether its signature is maximal.
        signatures: ``[group,] signature, size, holders, maximal, keeper, overlapping``: one
            row per distinct signature (per group); ``overlapping`` is true for a maximal
            signature sharing a hash with another maximal one.
    """

    regions: DataFrame
    signatures: DataFrame


def keep_one(
    signed: DataFrame,
    ranks: DataFrame,
    group: str | None = None,
    max_keep_docs: int | None = None,
) -> Passages:
    """Which copy of each region survives (see the module notes for the semantics).

    Args:
        signed: ``doc_id [, group], start, length, signature`` (:func:`region_signatures`).
        ranks: ``doc_id, rank`` (:func:`representative_keys`) of at least every document
            holding a region.
        group: the column signatures are compared within (a region competes only with the
            regions of its group); None: the whole corpus.
        max_keep_docs: a maximal signature with more holders has no keeper.

    Notes:
        Strict containment is found among the distinct signatures only: their hashes are
        exploded and joined on (group, hash); a pair (a, b) sharing ``size(a)`` hashes with
        ``size(a) < size(b)`` has ``a`` strictly inside ``b``. Each distinct signature is
        named exactly (no hash collision can merge two) by its xxhash64 and its rank among
        the signatures with that xxhash64. The work is quadratic in the number of distinct
        signatures sharing one hash.
    """
    gk = [] if group is None else [group]
    key = [*gk, SIGNATURE]
    holding = signed.select(DOC_ID, *key).distinct().join(ranks.select(DOC_ID, RANK), DOC_ID)
    distinct = holding.groupBy(*key).agg(
        F.count("*").alias("holders"), F.min(RANK).getField("__id").alias("__first")
    )
    sigs = _named(distinct, key)
    pairs = _pairs(sigs, gk)
    inside = _inside(pairs).select(F.col("__a").alias("__id"))
    not_maximal = inside.distinct().withColumn("__inside", F.lit(True))
    flagged = sigs.join(not_maximal, "__id", "left").withColumn(
        "maximal", F.col("__inside").isNull()
    )
    maximal_ids = flagged.where("maximal").select("__id")
    both = pairs.join(maximal_ids.withColumnRenamed("__id", "__a"), "__a", "left_semi").join(
        maximal_ids.withColumnRenamed("__id", "__b"), "__b", "left_semi"
    )
    overlapping = (
        both.select(F.col("__a").alias("__id"))
        .union(both.select(F.col("__b").alias("__id")))
        .distinct()
        .withColumn("__overlap", F.lit(True))
    )
    limited = F.lit(True) if max_keep_docs is None else F.col("holders") <= max_keep_docs
    keeper = F.when(F.col("maximal") & limited, F.col("__first"))
    signatures = flagged.join(overlapping, "__id", "left").select(
        *key,
        "size",
        "holders",
        "maximal",
        keeper.alias("keeper"),
        F.coalesce(F.col("__overlap"), F.lit(False)).alias("overlapping"),
    )

    decided = signed.join(signatures.select(*key, "holders", "maximal", "keeper"), key)
    kept = F.coalesce(F.col(DOC_ID) == F.col("keeper"), F.lit(False))
    regions = decided.select(
        DOC_ID,
        "start",
        "length",
        *gk,
        F.col("keeper").alias("kept_by"),
        kept.alias("kept"),
        F.col("holders").cast("int").alias("holders"),
        "maximal",
    )
    return Passages(regions, signatures)


def passage_docs(signed: DataFrame) -> DataFrame:
    """``signature, docs, doc_id, start, length``: one row per distinct signature of
    ``signed`` (``doc_id, start, length, signature``, :func:`region_signatures`), each a
    passage: ``docs`` the documents holding it, ``doc_id, start, length`` its first region
    of exactly that signature (the smallest id, then start).

    Notes:
        A document holds a passage when one of its regions has the passage's signature or
        one strictly containing it (:func:`keep_one`'s containment): so the copies of a
        passage whose edges winnowing cut differently (one more fingerprint in some copies)
        count for the smaller signature, and a passage inside a longer region of a
        document counts for that document. Groups are not compared: a passage is held
        whatever the group of its holder. A signature held by no other document (a
        document's own edge variant, or two passages joined into one region by a short
        gap) has ``docs`` 1, as few as its holders.
    """
    holding = signed.select(DOC_ID, SIGNATURE).distinct()
    first = F.min(F.struct(DOC_ID, "start", "length")).alias("__at")
    sigs = _named(signed.groupBy(SIGNATURE).agg(first), [SIGNATURE])
    named = holding.join(sigs.select(SIGNATURE, "__id"), SIGNATURE).select("__id", DOC_ID)
    inside = _inside(_pairs(sigs, [])).select(F.col("__a").alias("__id"), "__b")
    via = inside.join(named.withColumnRenamed("__id", "__b"), "__b").select("__id", DOC_ID)
    docs = named.union(via).groupBy("__id").agg(F.countDistinct(DOC_ID).alias("docs"))
    return sigs.join(docs, "__id").select(
        SIGNATURE,
        "docs",
        F.col("__at")[DOC_ID].alias(DOC_ID),
        F.col("__at.start").alias("start"),
        F.col("__at.length").alias("length"),
    )


def _named(distinct: DataFrame, key: list[str]) -> DataFrame:
    """``distinct`` (one row per ``key``, which ends with ``signature``) with ``size`` and
    ``__id``: ``struct(size, __sh, __sn)``, the signature's exact name (its xxhash64 over
    ``key`` and its rank among the signatures with that xxhash64)."""
    sig_hash = F.xxhash64(*[F.col(c) for c in key])
    named = distinct.withColumn("__sh", sig_hash).withColumn(
        "__sn", F.row_number().over(Window.partitionBy("__sh").orderBy(*key))
    )
    return named.withColumn("size", F.size(SIGNATURE)).withColumn(
        "__id", F.struct("size", "__sh", "__sn")
    )


def _pairs(sigs: DataFrame, gk: list[str]) -> DataFrame:
    """``__a, __b, __shared``: each unordered pair of signatures of ``sigs`` (:func:`_named`)
    sharing a hash (within ``gk``), once, the smaller (by size, then name) as ``__a``, and
    how many hashes they share."""
    members = sigs.select(*gk, "__id", F.explode(SIGNATURE).alias("hash"))
    a = members.withColumnRenamed("__id", "__a")
    b = members.withColumnRenamed("__id", "__b")
    return (
        a.join(b, [*gk, "hash"])
        .where(F.col("__a") < F.col("__b"))
        .groupBy("__a", "__b")
        .agg(F.count("*").alias("__shared"))
    )


def _inside(pairs: DataFrame) -> DataFrame:
    """The pairs of :func:`_pairs` whose ``__a`` is strictly inside ``__b``."""
    return pairs.where(
        (F.col("__shared") == F.col("__a.size")) & (F.col("__a.size") < F.col("__b.size"))
    )


def keep_counts(passages: Passages) -> dict[str, int]:
    """report.json's ``keep`` counts: ``maximal_regions`` (distinct maximal signatures),
    ``kept_regions`` and ``removed_regions`` (regions that survive / go; they add up to
    every region), ``removed_everywhere`` (maximal signatures without a keeper) and
    ``overlapping_regions`` (maximal signatures sharing a hash with another maximal one).
    Two aggregations; nothing per region reaches the driver."""
    maximal = F.col("maximal")
    sig = passages.signatures.agg(
        F.count(F.when(maximal, 1)).alias("maximal_regions"),
        F.count(F.when(maximal & F.col("keeper").isNull(), 1)).alias("removed_everywhere"),
        F.count(F.when(F.col("overlapping"), 1)).alias("overlapping_regions"),
    ).first()
    reg = passages.regions.agg(
        F.count(F.when(F.col("kept"), 1)).alias("kept_regions"),
        F.count(F.when(~F.col("kept"), 1)).alias("removed_regions"),
    ).first()
    got = {**(sig.asDict() if sig else {}), **(reg.asDict() if reg else {})}
    names = (
        "maximal_regions",
        "kept_regions",
        "removed_regions",
        "removed_everywhere",
        "overlapping_regions",
    )
    return {n: int(got.get(n) or 0) for n in names}
