"""The containment stage on Spark: after the near-duplicate clusters are settled, a kept
document contained in another kept document goes next to it; the same decisions as the
driver's ``driver.containment``, for a corpus no driver holds.

Candidates by prefix filtering as a join: each kept set's first ``|q| - ceil(T |q|) + 1``
hashes against the postings of every kept set (``kernels.containment`` says why nothing is
missed); each candidate is verified on the two full sets (``array_intersect``), never on an
estimate. Only the verified pairs, with their ends' places in the decision order, reach the
driver, which settles them (``kernels.containment.settle_containment``). Clusters are
turned round first by the driver's own rule (``driver.containment.promote``), run on groups
of whole clusters; the plan is cut where later steps read a frame more than once (a wide
join tree otherwise costs the planner more than the data).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.driver.batches import promoted_clusters_fn, shingle_sets_fn
from neardup_udfs.io.frames import arrow_frame
from neardup_udfs.kernels.containment import settle_containment
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import (
    CLUSTER_ID,
    CONTAINMENT,
    DOC_ID,
    IS_REPRESENTATIVE,
    JACCARD,
    LEADER,
    RELATION,
    SIMILARITY,
    TEXT,
    A,
    B,
)
from neardup_udfs.session import cut
from neardup_udfs.stages.cluster import rule_key

__all__ = ["Contained", "contain"]

_EPS = 1e-9  # as kernels.containment: T * n in floating point


@dataclass(frozen=True)
class Contained:
    """The stage's output."""

    clusters: DataFrame  # the clusters plus ``relation``; removed excerpts moved
    pairs: DataFrame  # a (excerpt), b (container), similarity, relation: containment pairs
    counts: dict[str, int]  # containment_pairs, contained, containment_kept


def _need(n: Column, threshold: float) -> Column:
    """``kernels.containment.required_shared`` as a column."""
    return F.greatest(F.ceil(F.lit(threshold) * n - F.lit(_EPS)), F.lit(1)).cast("int")


def _sets(docs: DataFrame, texts: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, shingles, hashes`` of the ``docs`` (``doc_id``) among ``texts``."""
    chosen = texts.select(DOC_ID, TEXT).join(docs.select(DOC_ID), DOC_ID, "left_semi")
    schema = f"{DOC_ID} string, shingles int, hashes array<bigint>"
    return chosen.mapInArrow(shingle_sets_fn(pipeline), schema)


def contain(
    clusters: DataFrame,
    texts: DataFrame,
    info: DataFrame,
    pipeline: Pipeline,
    *,
    threshold: float,
    min_shingles: int,
    rule: str,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> Contained:
    """The clusters after containment (``driver.containment.contain_on_driver``'s
    decisions, row for row).

    Args:
        clusters: ``doc_id, cluster_id, is_representative, similarity``.
        texts: ``doc_id, text``: the input texts (normalized here as the pipeline does).
        info: ``doc_id, leader, __length, __order`` for every document (the rule's order).
        pipeline: the run's MinHash pipeline (its normalization and shingles).
        threshold, min_shingles: the containment threshold and the smallest set that takes
            part.
        rule: the representative rule (``stages.cluster``), which orders sets of equal size.
        keep: given the frames read more than once (the job passes its cache's ``keep``).

    Returns:
        ``clusters`` plus ``relation``; every document removed here is verified at least
        ``threshold`` contained in its ``cluster_id``; ``pairs``: the verified containment
        pairs between kept documents and those of the documents moved with them.
    """
    spark = clusters.sparkSession
    clusters, promoted = _promote(clusters, texts, info, pipeline, threshold, min_shingles, rule)
    clusters = cut(clusters)  # read by every step below: computed once, its plan cut
    kept = clusters.where(F.col(IS_REPRESENTATIVE)).select(DOC_ID)
    sets = _sets(kept, texts, pipeline).where(F.col("shingles") >= min_shingles)
    order = F.struct((-F.col("shingles")).alias("__n"), rule_key(rule).alias("__rule"))
    ranked = keep(
        sets.join(info.select(DOC_ID, "__length", "__order"), DOC_ID).select(
            DOC_ID, "shingles", "hashes", order.alias("rank")
        )
    )
    prefix_len = F.col("shingles") - _need(F.col("shingles"), threshold) + 1
    probes = ranked.select(
        F.col(DOC_ID).alias("q"),
        F.col("rank").alias("rq"),
        F.explode(F.slice("hashes", 1, prefix_len)).alias("h"),
    )
    postings = ranked.select(
        F.col(DOC_ID).alias("x"), F.col("rank").alias("rx"), F.explode("hashes").alias("h")
    )
    candidates = (
        probes.join(postings, "h").where(F.col("rx") < F.col("rq")).select("q", "x").distinct()
    )
    qs = ranked.select(F.col(DOC_ID).alias("q"), F.col("shingles").alias("nq"),
                       F.col("hashes").alias("hq"), F.col("rank").alias("rq"))  # fmt: skip
    xs = ranked.select(F.col(DOC_ID).alias("x"), F.col("hashes").alias("hx"),
                       F.col("rank").alias("rx"))  # fmt: skip
    shared = F.size(F.array_intersect("hq", "hx"))
    verified = cut(
        candidates.join(qs, "q")
        .join(xs, "x")
        .select("q", "x", "nq", "rq", "rx", shared.alias("shared"))
        .where(F.col("shared") >= _need(F.col("nq"), threshold))
        .select("q", "x", "rq", "rx", (F.col("shared") / F.col("nq")).alias("c"))
    )
    # the documents removed in an excerpt's favour, not its exact copies: each must be
    # verified inside the container too
    leaders = info.select(DOC_ID, LEADER)
    rep_leader = leaders.select(F.col(DOC_ID).alias(CLUSTER_ID), F.col(LEADER).alias("__rl"))
    near = (
        clusters.where(~F.col(IS_REPRESENTATIVE))
        .join(verified.select(F.col("q").alias(CLUSTER_ID)).distinct(), CLUSTER_ID)
        .join(leaders, DOC_ID)
        .join(rep_leader, CLUSTER_ID)
        .where(F.col(LEADER) != F.col("__rl"))
        .select(F.col(DOC_ID).alias("m"), F.col(CLUSTER_ID).alias("q"))
    )
    m_sets = _sets(near.select(F.col("m").alias(DOC_ID)), texts, pipeline)
    ms = m_sets.join(info.select(DOC_ID, "__length", "__order"), DOC_ID).select(
        F.col(DOC_ID).alias("m"),
        F.col("shingles").alias("nm"),
        F.col("hashes").alias("hm"),
        order.alias("rm"),
    )
    m_shared = F.size(F.array_intersect("hm", "hx"))
    fits = (F.col("nm") >= min_shingles) & (F.col("shared") >= _need(F.col("nm"), threshold))
    member_pairs = cut(
        near.join(verified.select("q", "x", "rx"), "q")
        .join(ms, "m")
        .join(xs.select("x", "hx"), "x")
        .select("m", "q", "x", "nm", "rm", "rx", m_shared.alias("shared"))
        .select(
            "m",
            "q",
            "x",
            (F.col("shared") / F.col("nm")).alias("c"),
            # a document goes only next to one before it: more shingles (equal: the rule)
            (fits & (F.col("rx") < F.col("rm"))).alias("ok"),
        )
    )
    refused = member_pairs.groupBy("q", "x").agg(F.min(F.col("ok").cast("int")).alias("__ok"))
    edges = (
        verified.join(refused, ["q", "x"], "left")
        .select("q", "x", "c", F.coalesce(F.col("__ok") == 1, F.lit(True)).alias("allowed"))
        .toArrow()
    )
    ends = verified.select(F.col("q").alias("node"), F.col("rq").alias("rank")).unionByName(
        verified.select(F.col("x").alias("node"), F.col("rx").alias("rank"))
    )
    nodes = ends.distinct().orderBy("rank").select("node").toArrow().column(0)
    names = nodes.to_numpy(zero_copy_only=False)
    where = pd.Index(names)
    qi = where.get_indexer(edges.column("q").to_numpy(zero_copy_only=False)).astype(np.int64)
    xi = where.get_indexer(edges.column("x").to_numpy(zero_copy_only=False)).astype(np.int64)
    c = edges.column("c").to_numpy(zero_copy_only=False).astype(np.float64)
    allowed = edges.column("allowed").to_numpy(zero_copy_only=False).astype(bool)
    rep, value = settle_containment(np.arange(len(names), dtype=np.int64), qi, xi, c, allowed)
    gone = np.flatnonzero(rep >= 0)
    moves = arrow_frame(
        spark,
        pa.table(
            {
                "__q": pa.array(names[gone], pa.string()),
                "__x": pa.array(names[rep[gone]], pa.string()),
                "__c": pa.array(value[gone], pa.float64()),
            }
        ),
    )
    used = member_pairs.join(
        moves.select(F.col("__q").alias("q"), F.col("__x").alias("x")), ["q", "x"], "left_semi"
    )
    own = used.select(F.col("m").alias(DOC_ID), F.col("c").alias("__mc"))
    moved = (
        clusters.join(moves, clusters[CLUSTER_ID] == moves["__q"], "left")
        .join(own, DOC_ID, "left")
        .join(leaders, DOC_ID, "left")
        .join(rep_leader, CLUSTER_ID, "left")
    )
    moving = F.col("__x").isNotNull()
    copy = F.col(LEADER) == F.col("__rl")
    out = moved.select(
        DOC_ID,
        F.when(moving, F.col("__x")).otherwise(F.col(CLUSTER_ID)).alias(CLUSTER_ID),
        (F.col(IS_REPRESENTATIVE) & ~moving).alias(IS_REPRESENTATIVE),
        F.when(moving & copy, F.col("__c"))
        .when(moving, F.col("__mc"))
        .otherwise(F.col(SIMILARITY))
        .alias(SIMILARITY),
        F.when(moving, F.lit(CONTAINMENT)).otherwise(F.col(RELATION)).alias(RELATION),
    )
    pairs = promoted.unionByName(
        verified.select(F.col("q").alias(A), F.col("x").alias(B), F.col("c").alias(SIMILARITY))
    )
    pairs = pairs.unionByName(
        used.select(F.col("m").alias(A), F.col("x").alias(B), F.col("c").alias(SIMILARITY))
    ).withColumn(RELATION, F.lit(CONTAINMENT))
    with_container = edges.column("q").unique()
    counts = {
        "containment_pairs": edges.num_rows,
        "contained": 0,  # counted by the caller from the clusters it keeps
        "containment_kept": len(with_container) - len(np.unique(names[gone])),
    }
    return Contained(out, pairs, counts)


def _promote(
    clusters: DataFrame,
    texts: DataFrame,
    info: DataFrame,
    pipeline: Pipeline,
    threshold: float,
    min_shingles: int,
    rule: str,
) -> tuple[DataFrame, DataFrame]:
    """``clusters`` plus ``relation``, where a removed near-duplicate that contains the kept
    document is kept instead, and the containment pairs that rest on it (``a, b,
    similarity``): ``driver.containment.promote``'s decisions, made by it on each cluster
    that has a near-duplicate member, with its documents' texts gathered to one group."""
    rows = clusters.join(info.select(DOC_ID, LEADER, "__length", "__order"), DOC_ID)
    rep_leader = info.select(F.col(DOC_ID).alias(CLUSTER_ID), F.col(LEADER).alias("__rl"))
    near = ~F.col(IS_REPRESENTATIVE) & (F.col(LEADER) != F.col("__rl"))
    involved = rows.join(rep_leader, CLUSTER_ID).where(near).select(CLUSTER_ID).distinct()
    text = F.coalesce(F.col(TEXT), F.lit(""))
    member = F.struct(DOC_ID, LEADER, IS_REPRESENTATIVE, SIMILARITY, "__length", "__order",
                      text.alias(TEXT))  # fmt: skip
    groups = (
        rows.join(involved, CLUSTER_ID, "left_semi")
        .join(texts.select(DOC_ID, TEXT), DOC_ID, "left")
        .groupBy(CLUSTER_ID)
        .agg(F.collect_list(member).alias("members"))
    )
    schema = (
        f"{DOC_ID} string, {CLUSTER_ID} string, {IS_REPRESENTATIVE} boolean, "
        f"{SIMILARITY} double, {RELATION} string"
    )
    decided = cut(
        groups.mapInArrow(promoted_clusters_fn(pipeline, rule, threshold, min_shingles), schema)
    )
    relation = F.when(F.col(IS_REPRESENTATIVE), F.lit(None).cast("string")).otherwise(JACCARD)
    alone = rows.join(involved, CLUSTER_ID, "left_anti").select(
        DOC_ID, CLUSTER_ID, IS_REPRESENTATIVE, SIMILARITY, relation.alias(RELATION)
    )
    pairs = decided.where(F.col(RELATION) == CONTAINMENT).select(
        F.col(DOC_ID).alias(A), F.col(CLUSTER_ID).alias(B), SIMILARITY
    )
    return alone.unionByName(decided), pairs
