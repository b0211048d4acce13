"""The cluster stage of every job: verified edges between exact-duplicate groups in, one row
per document out (its cluster, whether it is kept, its score to the kept document).

Two clusterings: ``anchored`` (the default: a document is removed only for its own verified
similarity to the document kept in its place, ``stages.anchored``) and ``connected``
(single link: connected components, then the representative rule per component; a member
may be far from the representative, ``stages.components`` and ``stages.select``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.driver.settings import match_order, rule_fields
from neardup_udfs.schemas import (
    CLUSTER_ID,
    DISTANCE,
    DOC_ID,
    INDEXED_ID,
    IS_REPRESENTATIVE,
    LEADER,
    SIMILARITY,
    A,
    B,
)
from neardup_udfs.stages.anchored import anchored_representatives
from neardup_udfs.stages.components import connected_components
from neardup_udfs.stages.select import select_representatives

__all__ = ["Clustered", "cluster", "rule_key"]

"""How verified pairs may become clusters: the values of config key ``clustering``."""


@dataclass(frozen=True)
class Clustered:
    """The stage's output."""

    # doc_id, cluster_id, is_representative, similarity | distance (+ indexed_id with matches)
    clusters: DataFrame
    rounds: int  # parallel rounds (anchored) or Large-Star/Small-Star rounds (connected)
    driver_edges: int  # anchored: undecided edges finished on the driver (0: none)
    chained: int  # connected: members beyond the chaining floor (anchored: always 0)
    persisted: list[DataFrame]  # persisted here; the caller unpersists them when done


def cluster(
    members: DataFrame,
    verified: DataFrame,
    sketches: DataFrame,
    *,
    kind: str,
    rule: str,
    clustering: str,
    max_rounds: int,
    max_driver_edges: int,
    floor: float,
    no_chaining: bool = False,
    matches: DataFrame | None = None,
    edge_count: int | None = None,
) -> Clustered:
    """One row per member: its cluster (named by the kept document's id) and its score.

    Args:
        members: ``doc_id, leader`` (the exact-duplicate group's smallest id) plus
            ``__length`` and ``__order`` for the representative rule.
        verified: ``a, b`` (leaders) and ``similarity`` (MinHash) or ``distance``.
        sketches: ``doc_id`` (leaders) and the sketch (connected clustering scores with it).
        kind: ``minhash`` or ``simhash`` (pHash too: a distance).
        rule: ``min_id``, ``earliest`` (by ``__order``, nulls last) or ``longest``.
        clustering: one of :data:`CLUSTERINGS` (the config checked it).
        max_rounds, max_driver_edges: the round limits (``max_driver_edges``: anchored only).
        floor, no_chaining: connected only, see ``select_representatives``.
        matches: ``doc_id`` (a leader), ``indexed_id`` and the score: leaders verified near
            an indexed document, which represents them (``indexed_id`` column added).
        edge_count: at least the rows of ``verified``, when known (anchored: at most
            ``max_driver_edges`` clusters on the driver with no count, no round).

    Notes:
        Anchored: a group's members share its fate; the group's kept member is its first
        by the rule, and the group takes that member's place in the rule's order. Every
        removed member's score is its group's verified score to the kept group (an exact
        duplicate of the kept document: 1.0, distance 0), so removal never rests on a chain.
        A leader matched to the index is removed in favour of its closest indexed document
        (ties: the smallest id), whose id is then its ``cluster_id`` and ``indexed_id``,
        before any other decision; it never represents other documents.
    """
    if clustering == "connected":
        return _connected(members, verified, sketches, kind, rule, max_rounds, floor,
                          no_chaining, matches)  # fmt: skip
    score = DISTANCE if kind == "simhash" else SIMILARITY
    # every member's place in the rule's order; the group's smallest is its kept member
    rank = F.min(rule_key(rule)).over(Window.partitionBy(LEADER))
    first = members.select(DOC_ID, LEADER, rank.alias("rank")).withColumn(
        "__kept", F.col("rank.__id")
    )
    groups = first.where(F.col(DOC_ID) == F.col("__kept")).select(
        F.col(LEADER).alias("node"), "__kept", "rank"
    )
    fixed = None
    if matches is not None:
        named = {"score": F.col(score), "indexed_id": F.col(INDEXED_ID)}
        keys = match_order(kind == "simhash")
        order = [named[k].asc() if up else named[k].desc() for k, up in keys]
        best = Window.partitionBy(DOC_ID).orderBy(*order)  # the one declaration of the choice
        fixed = (
            matches.withColumn("__n", F.row_number().over(best))
            .where(F.col("__n") == 1)
            .select(F.col(DOC_ID).alias("node"), F.col(INDEXED_ID).alias("rep"), score)
        )
    edges = verified.select(A, B, score)
    got = anchored_representatives(
        edges,
        groups.select("node", "rank"),
        score=score,
        higher_is_closer=kind != "simhash",
        max_rounds=max_rounds,
        max_driver_edges=max_driver_edges,
        fixed=fixed,
        edge_count=edge_count,
    )
    own = F.lit(0 if kind == "simhash" else 1.0)
    assigned = first.join(
        got.assignment.select(F.col("node").alias(LEADER), "rep", score), LEADER, "left"
    )
    if fixed is not None:
        flag = fixed.select(F.col("node").alias(LEADER), F.lit(True).alias("__indexed"))
        assigned = assigned.join(flag, LEADER, "left")
    else:
        assigned = assigned.withColumn("__indexed", F.lit(None).cast("boolean"))
    indexed = F.coalesce(F.col("__indexed"), F.lit(False))  # represented by the index
    rep_leader = F.when(indexed, F.lit(None)).otherwise(F.coalesce(F.col("rep"), F.col(LEADER)))
    kept_of = groups.select(F.col("node").alias("__rep_leader"), F.col("__kept").alias("__rk"))
    joined = assigned.withColumn("__rep_leader", rep_leader).join(kept_of, "__rep_leader", "left")
    cols = [
        F.col(DOC_ID),
        F.when(indexed, F.col("rep")).otherwise(F.col("__rk")).alias(CLUSTER_ID),
        (
            ~indexed & (F.col(DOC_ID) == F.col("__kept")) & (F.col("__rep_leader") == F.col(LEADER))
        ).alias(IS_REPRESENTATIVE),
        F.coalesce(F.col(score), own).cast("int" if kind == "simhash" else "double").alias(score),
    ]
    if matches is not None:
        cols.append(F.when(indexed, F.col("rep")).alias(INDEXED_ID))
    return Clustered(joined.select(*cols), got.rounds, got.driver_edges, 0, [])


def rule_key(rule: str) -> Column:
    """A member's place in the rule's order as one struct, smaller first, ending in its id
    (``__id``): ``earliest`` by ``__order`` with nulls last, ``longest`` by ``__length``
    descending, ``min_id`` by id alone."""
    fields: list[Column] = []
    for field in rule_fields(rule):  # the one declaration of the rule
        col = F.col(f"__{field.name}")
        fields += [col.isNull()] if field.nullable else []
        fields.append(-col if field.descending else col)
    named = [f.alias(f"__k{i}") for i, f in enumerate(fields)]
    return F.struct(*named, F.col(DOC_ID).alias("__id"))


def _connected(
    members: DataFrame,
    verified: DataFrame,
    sketches: DataFrame,
    kind: str,
    rule: str,
    max_rounds: int,
    floor: float,
    no_chaining: bool,
    matches: DataFrame | None,
) -> Clustered:
    edges = verified.select(F.col(A).alias("src"), F.col(B).alias("dst"))
    comps = connected_components(edges, max_rounds=max_rounds)
    selection = select_representatives(
        members,
        comps.labels,
        sketches,
        kind=kind,
        rule=rule,
        floor=floor,
        no_chaining=no_chaining,
    )
    clusters = selection.clusters
    if matches is not None:
        clusters = _mark_indexed(clusters, members, matches)
    return Clustered(clusters, comps.rounds, 0, selection.chained, [selection.persisted])


def _mark_indexed(clusters: DataFrame, members: DataFrame, matches: DataFrame) -> DataFrame:
    """``clusters`` plus ``indexed_id``: for a cluster with a member (through its exact
    duplicate leader) near an indexed document, the smallest such indexed id, and then no
    representative: the cluster is represented by the index."""
    matched = matches.groupBy(F.col(DOC_ID).alias(LEADER)).agg(F.min(INDEXED_ID).alias(INDEXED_ID))
    per_cluster = (
        clusters.join(members.select(DOC_ID, LEADER), DOC_ID)
        .join(matched, LEADER)
        .groupBy(CLUSTER_ID)
        .agg(F.min(INDEXED_ID).alias(INDEXED_ID))
    )
    marked = clusters.join(per_cluster, CLUSTER_ID, "left")
    rep = F.col(IS_REPRESENTATIVE) & F.col(INDEXED_ID).isNull()
    return marked.withColumn(IS_REPRESENTATIVE, rep).select(*clusters.columns, INDEXED_ID)
