"""The anchored cluster stage: verified edges in, each node's representative out, where every
node that is not a representative is itself verified near the representative it is given.

Single-link clustering (connected components) removes C in favour of A when A ~ B ~ C, though
C may be nothing like A. Here the representatives are the greedy maximal independent set of
the verified graph in the representative rule's order (``kernels.greedy``): no two of them
are a verified pair, and every other node has a verified edge to at least one, to the most
similar of which it is assigned. The set is computed in parallel rounds on DataFrames: in a
round, every undecided node that comes first among its undecided neighbours is kept and its
undecided neighbours are removed (Blelloch, Fineman, Shun, "Greedy sequential maximal
independent set and matching are parallel on average", SPAA 2012: the rounds give exactly
the sequential pass's set). Whenever the undecided remainder has at most
``max_driver_edges`` edges (before the first round, too) the driver finishes it by the
sequential pass; the stage fails, naming both limits, when more is left after ``max_rounds``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from neardup_udfs.kernels.greedy import greedy_keep
from neardup_udfs.session import cut

__all__ = [
    "Anchored",
    "AnchoredDidNotFinish",
    "AnchoredInconsistent",
    "anchored_representatives",
]

_log = logging.getLogger("neardup.anchored")


class AnchoredDidNotFinish(RuntimeError):
    """Undecided edges were left after ``max_rounds`` rounds, more than the driver may take."""


class AnchoredInconsistent(RuntimeError):
    """Two representatives are a verified pair, or a removed node has no representative."""


@dataclass(frozen=True)
class Anchored:
    """The stage's output."""

    # node, rep, <score>: one row per node of an edge or of ``fixed``; rep == node for the
    # representatives (score 1.0 or distance 0); otherwise the score of the edge (node, rep)
    assignment: DataFrame
    rounds: int  # parallel rounds run
    driver_edges: int  # undecided edges finished on the driver (0: none)


def _key(rank: Column, node: Column) -> Column:
    """A node's place in the order: its rank, then its id (a total order)."""
    return F.struct(rank.alias("r"), node.alias("n"))


def _without(e: DataFrame, nodes: DataFrame) -> DataFrame:
    """The edges of ``e`` (``lo``, ``hi``) with neither end among ``nodes`` (``node``)."""
    e = e.join(nodes.withColumnRenamed("node", "lo"), "lo", "left_anti")
    return e.join(nodes.withColumnRenamed("node", "hi"), "hi", "left_anti")


def _node_keys(e: DataFrame) -> DataFrame:
    """``node, k``: every end of the edges ``e`` with its key, once."""
    lo = e.select(F.col("lo").alias("node"), F.col("klo").alias("k"))
    return lo.unionByName(e.select(F.col("hi").alias("node"), F.col("khi").alias("k"))).distinct()


def _round(e: DataFrame) -> DataFrame:
    """The nodes one round removes: every undecided neighbour of a node that comes first
    among its undecided neighbours (``e``: ``lo, hi, klo, khi``, both ends undecided)."""
    u, ku, v, kv = F.col("u"), F.col("ku"), F.col("v"), F.col("kv")
    both = F.array(
        F.struct(F.col("lo").alias("u"), F.col("klo").alias("ku"), F.col("hi").alias("v"),
                 F.col("khi").alias("kv")),
        F.struct(F.col("hi").alias("u"), F.col("khi").alias("ku"), F.col("lo").alias("v"),
                 F.col("klo").alias("kv")),
    )  # fmt: skip
    adj = e.select(F.explode(both).alias("x")).select("x.*")
    first = ku < F.min(kv).over(Window.partitionBy(u))
    flagged = adj.select(v.alias("node"), first.alias("__by_first"))
    return flagged.where(F.col("__by_first")).select("node").distinct()


def _order(e: DataFrame) -> list[str]:
    """The nodes of ``e`` in Spark's key order (the rule's order, exactly as Spark sorts)."""
    return [r.node for r in _node_keys(e).orderBy("k").select("node").collect()]


def _sequential(spark: SparkSession, e: DataFrame) -> tuple[DataFrame, int]:
    """The nodes the sequential pass removes from the undecided remainder ``e``, and its
    edge count; the remainder is collected to the driver."""
    rows = e.select("lo", "hi").collect()
    nodes = _order(e)
    place = {n: i for i, n in enumerate(nodes)}
    src = np.fromiter((place[r.lo] for r in rows), np.int64, len(rows))
    dst = np.fromiter((place[r.hi] for r in rows), np.int64, len(rows))
    keep = greedy_keep(len(nodes), src, dst)
    removed = [(n,) for n, k in zip(nodes, keep.tolist(), strict=True) if not k]
    return spark.createDataFrame(removed, "node string"), len(rows)


def _whole_on_driver(graph: DataFrame, score: str, higher_is_closer: bool) -> DataFrame:
    """The assignment of the whole graph (``lo, hi, klo, khi, <score>``, small enough to
    collect) computed on the driver: the same representatives and choices as the rounds."""
    rows = graph.select("lo", "hi", score).collect()
    nodes = _order(graph)
    place = {n: i for i, n in enumerate(nodes)}
    lo = np.fromiter((place[r.lo] for r in rows), np.int64, len(rows))
    hi = np.fromiter((place[r.hi] for r in rows), np.int64, len(rows))
    values = np.array([r[2] for r in rows], dtype=np.float64)
    keep = greedy_keep(len(nodes), lo, hi)
    if (keep[lo] & keep[hi]).any():
        raise AnchoredInconsistent("two representatives are a verified pair")
    # every edge between a kept and a removed node is an offer to the removed one; it takes
    # the closest, ties by the representative's place in the order
    offer = keep[lo] != keep[hi]
    node = np.where(keep[lo], hi, lo)[offer]
    rep = np.where(keep[lo], lo, hi)[offer]
    value = values[offer]
    pick = np.lexsort((rep, -value if higher_is_closer else value, node))
    first = np.ones(len(pick), dtype=np.bool_)
    first[1:] = node[pick][1:] != node[pick][:-1]
    chosen = pick[first]
    if len(chosen) != int((~keep).sum()):
        raise AnchoredInconsistent("a removed node has no adjacent representative")
    kind = graph.schema[score].dataType
    own = 1.0 if higher_is_closer else 0
    out = [(n, n, own) for n, k in zip(nodes, keep.tolist(), strict=True) if k]
    cast = float if higher_is_closer else int
    out += [
        (nodes[n], nodes[r], cast(v))
        for n, r, v in zip(
            node[chosen].tolist(), rep[chosen].tolist(), value[chosen].tolist(), strict=True
        )
    ]
    schema = f"node string, rep string, {score} {kind.simpleString()}"
    return graph.sparkSession.createDataFrame(out, schema)


def anchored_representatives(
    edges: DataFrame,
    ranks: DataFrame,
    *,
    score: str,
    higher_is_closer: bool,
    max_rounds: int = 50,
    max_driver_edges: int = 200_000,
    fixed: DataFrame | None = None,
) -> Anchored:
    """Each node's representative: a greedy maximal independent set of ``edges`` in rank
    order, and every other node assigned to its closest adjacent representative.

    Args:
        edges: verified pairs ``a``, ``b`` (string ids) and ``score``; undirected,
            duplicates (the closest score counts) and self-loops (ignored) allowed.
        ranks: ``node``, ``rank`` for every node of ``edges``: the representative rule's
            order (any orderable type without nulls; smaller first, ties by node id).
        score: the name of the score column (``similarity`` or ``distance``).
        higher_is_closer: True for similarities, False for distances.
        max_rounds: the most parallel rounds run.
        max_driver_edges: the largest undecided remainder (in edges) the driver finishes:
            rounds run only while more is left (0: rounds until nothing is left).
        fixed: ``node, rep, <score>``: nodes removed before the first round in favour of
            representatives outside ``edges`` (an index's documents); they never become
            representatives, and their edges play no part.

    Returns:
        ``assignment``: ``node, rep, <score>`` for every node of ``edges`` and ``fixed``.

    Raises:
        ValueError: a node of ``edges`` has no rank (naming the edge).
        AnchoredDidNotFinish: more than ``max_driver_edges`` undecided edges after
            ``max_rounds`` rounds (the message names both limits).
        AnchoredInconsistent: the final check found two adjacent representatives or a
            removed node without an adjacent representative (a bug, never expected).

    Notes:
        The representatives are exactly those of the sequential greedy pass in rank order
        (``kernels.greedy.greedy_keep``), so the result is a function of the graph and the
        ranks alone: independent of partitioning, shuffle partitions, AQE and of whether the
        rounds or the driver finished. A removed node's representative is its adjacent one
        with the closest score, ties by rank. Lineage is cut every round
        (``session.cut``: reliable checkpoints where a checkpoint directory is set).
    """
    if max_rounds < 1:
        raise ValueError(f"config key 'max_rounds': must be >= 1, got {max_rounds}")
    if max_driver_edges < 0:
        raise ValueError(f"config key 'max_driver_edges': must be >= 0, got {max_driver_edges}")
    spark = edges.sparkSession
    a, b = F.col("a").cast("string"), F.col("b").cast("string")
    best = F.max if higher_is_closer else F.min
    e0 = (
        edges.select(F.least(a, b).alias("lo"), F.greatest(a, b).alias("hi"), F.col(score))
        .where(F.col("lo") != F.col("hi"))
        .groupBy("lo", "hi")
        .agg(best(score).alias(score))
    )
    if fixed is not None:
        e0 = _without(e0, fixed.select(F.col("node").cast("string").alias("node")))
    key = ranks.select(F.col("node").cast("string").alias("node"), F.col("rank"))
    klo = key.select(F.col("node").alias("lo"), _key(F.col("rank"), F.col("node")).alias("klo"))
    khi = key.select(F.col("node").alias("hi"), _key(F.col("rank"), F.col("node")).alias("khi"))
    # computed once: the census, the driver's collects and the rounds all read it
    graph = cut(e0.join(klo, "lo", "left").join(khi, "hi", "left"))
    unranked = F.col("klo").isNull() | F.col("khi").isNull()
    census = graph.agg(F.count(F.lit(1)), F.count(F.when(unranked, 1))).first()
    assert census is not None  # a global aggregate has exactly one row
    if census[1]:
        missing = graph.where(unranked).select("lo", "hi").first()
        assert missing is not None
        raise ValueError(f"edge ({missing.lo!r}, {missing.hi!r}) has a node without a rank")
    left = int(census[0])
    if left <= max_driver_edges:  # the whole graph fits on the driver: no round at all
        whole = _whole_on_driver(graph, score, higher_is_closer)
        return Anchored(_with_fixed(whole, fixed, graph.schema[score].dataType), 0, left)
    undecided = graph.select("lo", "hi", "klo", "khi")
    removed: list[DataFrame] = []
    rounds = 0
    while left > max_driver_edges and rounds < max_rounds:
        rounds += 1
        gone = cut(_round(undecided))
        removed.append(gone)
        undecided = cut(_without(undecided, gone))
        left = undecided.count()
        _log.info("round %d: %d undecided edges left", rounds, left)
    driver_edges = 0
    if left:
        if left > max_driver_edges:  # after max_rounds
            raise AnchoredDidNotFinish(
                f"{left} undecided edges after max_rounds = {max_rounds} round(s), more than "
                f"max_driver_edges = {max_driver_edges}: raise either config key"
            )
        gone, driver_edges = _sequential(spark, undecided)
        removed.append(gone)
    return Anchored(_assign(graph, removed, score, higher_is_closer, fixed), rounds, driver_edges)


def _assign(
    graph: DataFrame,
    removed: list[DataFrame],
    score: str,
    higher_is_closer: bool,
    fixed: DataFrame | None,
) -> DataFrame:
    """Every graph node's representative (itself when kept), checked; plus ``fixed``."""
    spark = graph.sparkSession
    out = spark.createDataFrame([], "node string")
    for df in removed:
        out = out.unionByName(df)
    out = out.distinct().withColumn("__out", F.lit(True))
    nodes = _node_keys(graph).select("node")
    status = nodes.join(out, "node", "left").select(
        "node", F.coalesce("__out", F.lit(False)).alias("out")
    )
    so = status.select(F.col("node").alias("lo"), F.col("out").alias("olo"))
    sh = status.select(F.col("node").alias("hi"), F.col("out").alias("ohi"))
    marked = cut(graph.join(so, "lo").join(sh, "hi"))
    closer = -F.col(score) if higher_is_closer else F.col(score)
    offers = marked.where(F.col("olo") != F.col("ohi")).select(
        F.when(F.col("olo"), F.col("lo")).otherwise(F.col("hi")).alias("node"),
        F.struct(
            closer.alias("c"),
            F.when(F.col("olo"), F.col("khi")).otherwise(F.col("klo")).alias("k"),
            F.when(F.col("olo"), F.col("hi")).otherwise(F.col("lo")).alias("rep"),
            F.col(score).alias("s"),
        ).alias("o"),
    )
    chosen = offers.groupBy("node").agg(F.min("o").alias("o"))
    assigned = cut(status.join(chosen, "node", "left"))
    # one Spark job checks both guarantees
    both_kept = marked.where(~F.col("olo") & ~F.col("ohi")).select(
        F.lit("representatives").alias("what"), F.col("lo").alias("x"), F.col("hi").alias("y")
    )
    orphans = assigned.where(F.col("out") & F.col("o").isNull()).select(
        F.lit("orphan").alias("what"), F.col("node").alias("x"), F.lit(None).cast("string")
    )
    bad = both_kept.unionByName(orphans.toDF("what", "x", "y")).first()
    if bad is not None and bad.what == "representatives":
        raise AnchoredInconsistent(f"representatives {bad.x!r} and {bad.y!r} are a verified pair")
    if bad is not None:
        raise AnchoredInconsistent(f"removed node {bad.x!r} has no adjacent representative")
    own = F.lit(1.0 if higher_is_closer else 0).cast(graph.schema[score].dataType)
    result = assigned.select(
        "node",
        F.when(F.col("out"), F.col("o.rep")).otherwise(F.col("node")).alias("rep"),
        F.when(F.col("out"), F.col("o.s")).otherwise(own).alias(score),
    )
    return _with_fixed(result, fixed, graph.schema[score].dataType)


def _with_fixed(assignment: DataFrame, fixed: DataFrame | None, kind: DataType) -> DataFrame:
    """``assignment`` (``node, rep, <score>``) plus the rows of ``fixed``."""
    if fixed is None:
        return assignment
    score = assignment.columns[2]
    return assignment.unionByName(
        fixed.select(
            F.col("node").cast("string"), F.col("rep").cast("string"), F.col(score).cast(kind)
        )
    )
