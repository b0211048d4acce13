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

The heavy part works on 64-bit ordinals, not on ids: every node gets a number that grows
with its place in the rule's order (one sort of the nodes), so an edge is two longs and its
earlier end is the smaller one; ids come back only for the assignment.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from neardup_udfs.io.frames import arrow_frame
from neardup_udfs.kernels.greedy import (
    AnchoredInconsistent,
    edge_nodes,
    greedy_assignment,
    greedy_keep,
)
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


@dataclass(frozen=True)
class Anchored:
    """The stage's output."""

    # node, rep, <score>: one row per node of an edge or of ``fixed``; rep == node for the
    # representatives (score 1.0 or distance 0); otherwise the score of the edge (node, rep)
    assignment: DataFrame
    rounds: int  # parallel rounds run
    driver_edges: int  # undecided edges finished on the driver (0: none)


def _without(e: DataFrame, nodes: DataFrame) -> DataFrame:
    """The edges of ``e`` (``lo``, ``hi``) with neither end among ``nodes`` (``node``)."""
    e = e.join(nodes.withColumnRenamed("node", "lo"), "lo", "left_anti")
    return e.join(nodes.withColumnRenamed("node", "hi"), "hi", "left_anti")


def _round(e: DataFrame) -> DataFrame:
    """The nodes one round removes (``node``): every undecided neighbour of a node that
    comes first among its undecided neighbours (``e``: ``lo < hi``, both undecided). A node
    comes first exactly when it is the later end of no edge."""
    later = e.select(F.col("hi").alias("lo")).distinct()
    return e.join(later, "lo", "left_anti").select(F.col("hi").alias("node")).distinct()


def _in_order(raw: DataFrame, ranks: DataFrame) -> DataFrame:
    """Every node of the edges ``raw`` (``a, b``) once with its ``rank`` (null: none),
    sorted by the rule's order: rank (the unranked first), then id."""
    key = ranks.select(F.col("node").cast("string").alias("node"), F.col("rank"))
    ends = raw.select(F.col("a").alias("node")).unionByName(raw.select(F.col("b").alias("node")))
    placed = ends.distinct().join(key, "node", "left")
    return placed.orderBy(F.col("rank").asc_nulls_first(), F.col("node"))


def _ordinals(raw: DataFrame, ranks: DataFrame) -> DataFrame:
    """``node, o, ranked``: every node of the edges ``raw`` once (:func:`_in_order`), with a
    long ``o`` that grows with the node's place in the order (computed now, lineage cut) and
    whether it has a rank."""
    ordered = _in_order(raw, ranks)
    # range partitions hold increasing keys, and the id grows within and across them
    return cut(
        ordered.select(
            "node",
            F.monotonically_increasing_id().alias("o"),
            F.col("rank").isNotNull().alias("ranked"),
        )
    )


def _arrays(df: DataFrame, *columns: str) -> list[Any]:
    """The columns of ``df`` (small enough for the driver) as numpy arrays, through Arrow."""
    table = df.select(*columns).toArrow()
    return [table.column(c).to_numpy() for c in columns]


def _sequential(spark: SparkSession, e: DataFrame) -> tuple[DataFrame, int]:
    """The nodes (``node``) the sequential pass removes from the undecided remainder ``e``,
    and its edge count; the remainder is collected to the driver."""
    lo, hi = _arrays(e, "lo", "hi")
    nodes, li, hi_i = edge_nodes(lo, hi)
    keep = greedy_keep(len(nodes), li, hi_i)
    return _long_frame(spark, {"node": nodes[~keep]}), len(lo)


def _long_frame(spark: SparkSession, columns: dict[str, Any]) -> DataFrame:
    """A DataFrame of the given numpy columns, through Arrow."""
    import pyarrow as pa

    return arrow_frame(spark, pa.table(columns))


def _score_array(values: npt.NDArray[Any], higher_is_closer: bool) -> Any:
    import pyarrow as pa

    return pa.array(values, pa.float64() if higher_is_closer else pa.int32())


def _whole_on_driver(graph: DataFrame, score: str, higher_is_closer: bool) -> DataFrame:
    """The assignment (``node, rep, <score>``, ordinals) of the whole graph (``lo, hi,
    <score>``, small enough to collect) computed on the driver
    (``kernels.greedy.greedy_assignment``)."""
    import pyarrow as pa

    lo, hi, values = _arrays(graph, "lo", "hi", score)
    node, rep, value = greedy_assignment(lo, hi, values, higher_is_closer)
    table = pa.table({"node": node, "rep": rep, score: _score_array(value, higher_is_closer)})
    out = arrow_frame(graph.sparkSession, table)
    return out.select("node", "rep", F.col(score).cast(graph.schema[score].dataType))


def _named_on_driver(
    raw: DataFrame, ranks: DataFrame, score: str, higher_is_closer: bool
) -> DataFrame:
    """The assignment (``node, rep, <score>``, ids) of the edges ``raw`` (``a, b,
    <score>``, string ids, no self-loop), computed on the driver from two collects: the
    edges' nodes in the rule's order, and the edges. ValueError names an edge with a node
    without a rank."""
    import pandas as pd
    import pyarrow as pa

    table = (
        _in_order(raw, ranks).select("node", F.col("rank").isNotNull().alias("ranked")).toArrow()
    )
    names = table.column("node").to_numpy(zero_copy_only=False)
    if len(names) and not table.column("ranked")[0].as_py():
        _unranked(raw, names[0])
    a, b, values = _arrays(raw, "a", "b", score)
    where = pd.Index(names)
    oa, ob = where.get_indexer(a), where.get_indexer(b)
    lo, hi = np.minimum(oa, ob).astype(np.int64), np.maximum(oa, ob).astype(np.int64)
    node, rep, value = greedy_assignment(lo, hi, values, higher_is_closer)
    out = pa.table(
        {
            "node": pa.array(names[node], pa.string()),
            "rep": pa.array(names[rep], pa.string()),
            score: _score_array(value, higher_is_closer),
        }
    )
    kind = raw.schema[score].dataType
    return arrow_frame(raw.sparkSession, out).select(
        F.col("node").cast("string"), F.col("rep").cast("string"), F.col(score).cast(kind)
    )


def _unranked(raw: DataFrame, n: str) -> None:
    """Raise the ValueError naming an edge of ``raw`` with the node ``n``, which has no rank."""
    edge = raw.where((F.col("a") == n) | (F.col("b") == n)).first()
    assert edge is not None  # every node of ``order`` is an end of an edge
    lo, hi = sorted((edge.a, edge.b))
    raise ValueError(f"edge ({lo!r}, {hi!r}): node {n!r} is without a rank")


def anchored_representatives(
    edges: DataFrame,
    ranks: DataFrame,
    *,
    score: str,
    higher_is_closer: bool,
    max_rounds: int = 50,
    max_driver_edges: int = 200_000,
    fixed: DataFrame | None = None,
    edge_count: int | None = None,
) -> Anchored:
    """Each node's representative: a greedy maximal independent set of ``edges`` in rank
    order, and every other node assigned to its closest adjacent representative.

    Args:
        edges: verified pairs ``a``, ``b`` (string ids) and ``score``; undirected,
            duplicates (the closest score counts) and self-loops (ignored) allowed.
        ranks: ``node``, ``rank`` for every node of ``edges``, once: the representative
            rule's order (any orderable type without nulls; smaller first, ties by node id).
        score: the name of the score column (``similarity`` or ``distance``).
        higher_is_closer: True for similarities, False for distances.
        max_rounds: the most parallel rounds run (at least 1, as the config checks).
        max_driver_edges: the largest undecided remainder (in edges) the driver finishes (at
            least 0, as the config checks): rounds run only while more is left (0: rounds
            until nothing is left).
        fixed: ``node, rep, <score>``: nodes removed before the first round in favour of
            representatives outside ``edges`` (an index's documents); they never become
            representatives, and their edges play no part.
        edge_count: at least the number of ``edges`` rows, when the caller knows it: at most
            ``max_driver_edges`` sends the whole graph to the driver with no count and no
            Spark round (``driver_edges`` is then this count).

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
    spark = edges.sparkSession
    a, b = F.col("a").cast("string"), F.col("b").cast("string")
    raw = edges.select(a.alias("a"), b.alias("b"), F.col(score)).where(F.col("a") != F.col("b"))
    if fixed is not None:
        gone = fixed.select(F.col("node").cast("string").alias("node"))
        raw = raw.join(gone.withColumnRenamed("node", "a"), "a", "left_anti")
        raw = raw.join(gone.withColumnRenamed("node", "b"), "b", "left_anti")
    if edge_count is not None and edge_count <= max_driver_edges:  # no Spark round needed
        named = _named_on_driver(raw, ranks, score, higher_is_closer)
        kind = raw.schema[score].dataType
        return Anchored(_with_fixed(named, fixed, kind), 0, edge_count)
    order = _ordinals(raw, ranks)
    unranked = order.where(~F.col("ranked")).select("node").first()
    if unranked is not None:
        _unranked(raw, unranked.node)
    oa = order.select(F.col("node").alias("a"), F.col("o").alias("oa"))
    ob = order.select(F.col("node").alias("b"), F.col("o").alias("ob"))
    mapped = raw.join(oa, "a").join(ob, "b")
    lo_o, hi_o = F.least("oa", "ob").alias("lo"), F.greatest("oa", "ob").alias("hi")
    best = F.max if higher_is_closer else F.min
    # computed once: the count, the driver's collects and the rounds all read it
    graph = cut(mapped.groupBy(lo_o, hi_o).agg(best(score).alias(score)))
    left = graph.count()
    kind = graph.schema[score].dataType
    if left <= max_driver_edges:  # the whole graph fits on the driver: no round at all
        whole = _whole_on_driver(graph, score, higher_is_closer)
        return Anchored(_with_fixed(_named(whole, order), fixed, kind), 0, left)
    undecided = graph.select("lo", "hi")
    removed: list[DataFrame] = []
    rounds = 0
    while left > max_driver_edges and rounds < max_rounds:
        rounds += 1
        gone_now = cut(_round(undecided))
        removed.append(gone_now)
        undecided = cut(_without(undecided, gone_now))
        left = undecided.count()
        _log.info("round %d: %d undecided edges left", rounds, left)
    driver_edges = 0
    if left:
        if left > max_driver_edges:  # after max_rounds
            raise AnchoredDidNotFinish(
                f"{left} undecided edges after max_rounds = {max_rounds} round(s), more than "
                f"max_driver_edges = {max_driver_edges}: raise either config key"
            )
        gone_now, driver_edges = _sequential(spark, undecided)
        removed.append(gone_now)
    assigned = _assign(graph, removed, score, higher_is_closer)
    return Anchored(_with_fixed(_named(assigned, order), fixed, kind), rounds, driver_edges)


def _assign(
    graph: DataFrame, removed: list[DataFrame], score: str, higher_is_closer: bool
) -> DataFrame:
    """Every graph node's representative (itself when kept), checked: ``node, rep,
    <score>`` in ordinals."""
    out = removed[0]
    for df in removed[1:]:
        out = out.unionByName(df)
    out = out.distinct().withColumn("__out", F.lit(True))
    ends = graph.select(F.col("lo").alias("node")).unionByName(
        graph.select(F.col("hi").alias("node"))
    )
    status = (
        ends.distinct()
        .join(out, "node", "left")
        .select("node", F.coalesce("__out", F.lit(False)).alias("out"))
    )
    so = status.select(F.col("node").alias("lo"), F.col("out").alias("olo"))
    sh = status.select(F.col("node").alias("hi"), F.col("out").alias("ohi"))
    marked = cut(graph.join(so, "lo").join(sh, "hi"))
    closer = -F.col(score) if higher_is_closer else F.col(score)
    offers = marked.where(F.col("olo") != F.col("ohi")).select(
        F.when(F.col("olo"), F.col("lo")).otherwise(F.col("hi")).alias("node"),
        F.struct(
            closer.alias("c"),
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
        F.lit("orphan").alias("what"), F.col("node").alias("x"), F.lit(None).cast("long")
    )
    bad = both_kept.unionByName(orphans.toDF("what", "x", "y")).first()
    if bad is not None and bad.what == "representatives":
        raise AnchoredInconsistent(f"representatives #{bad.x} and #{bad.y} are a verified pair")
    if bad is not None:
        raise AnchoredInconsistent(f"removed node #{bad.x} has no adjacent representative")
    own = F.lit(1.0 if higher_is_closer else 0).cast(graph.schema[score].dataType)
    return assigned.select(
        "node",
        F.when(F.col("out"), F.col("o.rep")).otherwise(F.col("node")).alias("rep"),
        F.when(F.col("out"), F.col("o.s")).otherwise(own).alias(score),
    )


def _named(assignment: DataFrame, order: DataFrame) -> DataFrame:
    """``assignment`` (``node, rep, <score>`` in ordinals) with the ids back."""
    score = assignment.columns[2]
    node = order.select(F.col("o").alias("node"), F.col("node").alias("__node"))
    rep = order.select(F.col("o").alias("rep"), F.col("node").alias("__rep"))
    named = assignment.join(node, "node").join(rep, "rep")
    return named.select(F.col("__node").alias("node"), F.col("__rep").alias("rep"), score)


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
