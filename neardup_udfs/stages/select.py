"""The select stage: clusters from components, one representative each, the chaining guard."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.driver.settings import rule_fields
from neardup_udfs.schemas import (
    CLUSTER_ID,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    LEADER,
    SIGNATURE,
    SIMILARITY,
)
from neardup_udfs.stages.verify import estimated_jaccard, hamming

__all__ = ["Selection", "select_representatives"]


@dataclass(frozen=True)
class Selection:
    clusters: DataFrame  # doc_id, cluster_id, is_representative, similarity | distance
    chained: int  # members beyond the chaining floor (detached when no_chaining)
    persisted: DataFrame  # persisted by this stage; the caller unpersists it when done


def _rule_order(rule: str) -> list[Column]:
    """Total order of a cluster's members: the first one represents it (ties: smallest id)."""
    keys = [F.col(f"__{f.name}") for f in rule_fields(rule)]  # the one declaration of the rule
    return [
        *(c.desc_nulls_last() if f.descending else c.asc_nulls_last()
          for c, f in zip(keys, rule_fields(rule), strict=True)),
        F.col(DOC_ID),
    ]  # fmt: skip


def _with_representative(df: DataFrame, group: str, order: list[Column]) -> DataFrame:
    first = Window.partitionBy(group).orderBy(*order)
    return df.withColumn(
        CLUSTER_ID,
        F.first(DOC_ID).over(
            first.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
        ),
    )


def _score(df: DataFrame, sketches: DataFrame, kind: str) -> DataFrame:
    """Similarity (MinHash, estimated) or distance (SimHash) of each member to its
    representative, through both documents' exact-duplicate leaders; a member without a
    sketch (normalization left it no text: a cluster of its own) scores as its own
    representative (1.0, distance 0)."""
    col = FINGERPRINT if kind == "simhash" else SIGNATURE
    mine = sketches.select(F.col(DOC_ID).alias(LEADER), F.col(col).alias("__mine"))
    rep_leader = df.select(F.col(DOC_ID).alias(CLUSTER_ID), F.col(LEADER).alias("__rep_leader"))
    theirs = sketches.select(F.col(DOC_ID).alias("__rep_leader"), F.col(col).alias("__theirs"))
    joined = (
        df.join(mine, LEADER, "left")
        .join(rep_leader, CLUSTER_ID)
        .join(theirs, "__rep_leader", "left")
    )
    if kind == "simhash":
        distance = hamming(F.col("__mine"), F.col("__theirs"))
        return joined.withColumn(DISTANCE, F.coalesce(distance, F.lit(0)))
    similarity = estimated_jaccard(F.col("__mine"), F.col("__theirs"))
    return joined.withColumn(SIMILARITY, F.coalesce(similarity.cast("double"), F.lit(1.0)))


def select_representatives(
    members: DataFrame,
    labels: DataFrame,
    sketches: DataFrame,
    *,
    kind: str,
    rule: str,
    floor: float,
    no_chaining: bool,
) -> Selection:
    """One row per document: its cluster (named by the representative's id) and its score.

    Args:
        members: ``doc_id, leader`` plus ``__length`` and ``__order`` for the rules.
        labels: ``node, label`` from the components stage (leaders only).
        sketches: ``doc_id`` (leaders) and ``fingerprint`` or ``signature``.
        kind: ``simhash`` or ``minhash``.
        rule: ``min_id``, ``earliest`` (by ``__order``, nulls last) or ``longest``.
        floor: MinHash: lowest similarity to the representative; SimHash: largest distance.
        no_chaining: detach members beyond the floor into clusters of their own.

    Notes:
        Every cluster has exactly one representative; ties in the rule go to the smallest id.
        Single-link clustering can chain: a member joined through others may be far from
        the representative. Those members are counted; with ``no_chaining`` each such
        member's exact-duplicate group becomes a cluster of its own.
    """
    order = _rule_order(rule)
    comp = members.join(
        labels.select(F.col("node").alias(LEADER), F.col("label")), LEADER, "left"
    ).withColumn("__comp", F.coalesce(F.col("label"), F.col(LEADER)))
    ranked = _with_representative(comp, "__comp", order)
    scored = _score(ranked, sketches, kind)
    beyond = F.col(DISTANCE) > floor if kind == "simhash" else F.col(SIMILARITY) < floor
    scored = persisted = scored.withColumn("__chained", beyond).persist()
    chained = scored.where(F.col("__chained")).count()
    if no_chaining and chained:
        regroup = F.when(F.col("__chained"), F.concat(F.lit("\0"), F.col(LEADER))).otherwise(
            F.col("__comp")
        )
        base = scored.select(DOC_ID, LEADER, "__length", "__order", regroup.alias("__comp"))
        scored = _score(_with_representative(base, "__comp", order), sketches, kind)
    score = DISTANCE if kind == "simhash" else SIMILARITY
    clusters = scored.select(
        DOC_ID,
        CLUSTER_ID,
        (F.col(DOC_ID) == F.col(CLUSTER_ID)).alias(IS_REPRESENTATIVE),
        F.col(score),
    )
    return Selection(clusters, chained, persisted)
