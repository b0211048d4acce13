"""The connected-components stage: undirected edges in, one component label per node out.

Alternating Large-Star / Small-Star (Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii,
"Connected Components in MapReduce and Beyond", SoCC 2014) on plain DataFrames. Nothing
reaches the driver but one row of counts per round (and one example edge on failure).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.session import cut

__all__ = [
    "Components",
    "ComponentsDidNotConverge",
    "ComponentsInconsistent",
    "check_labels",
    "connected_components",
]

_log = logging.getLogger("neardup.components")


class ComponentsDidNotConverge(RuntimeError):
    """The edges were still not a star forest after ``max_rounds`` rounds."""


class ComponentsInconsistent(RuntimeError):
    """The two ends of an input edge got different labels (or one got none)."""


@dataclass(frozen=True)
class Components:
    """The stage's output."""

    labels: DataFrame  # node, label: the smallest node id (string order) of its component
    rounds: int  # Large-Star + Small-Star rounds run until the edges formed a star forest


def _ends(edges: DataFrame) -> DataFrame:
    """``src``, ``dst`` as plain (binary-collation) strings; rows with a null end dropped."""
    src, dst = F.col("src").cast("string"), F.col("dst").cast("string")
    return edges.select(src.alias("src"), dst.alias("dst")).dropna()


def _explode(df: DataFrame, names: tuple[str, str], *pairs: tuple[Column, Column]) -> DataFrame:
    """One output row (named ``names``) per pair of columns per input row."""
    rows = F.array(*(F.struct(p.alias(names[0]), q.alias(names[1])) for p, q in pairs))
    return df.select(F.explode(rows).alias("x")).select("x.*")


def _large_star(e: DataFrame) -> DataFrame:
    """Link every strictly larger neighbour v of u to m(u) = min(u and its neighbours)."""
    lo, hi, u, v = F.col("lo"), F.col("hi"), F.col("u"), F.col("v")
    adj = _explode(e, ("u", "v"), (lo, hi), (hi, lo))
    m = F.least(u, F.min(v).over(Window.partitionBy(u)))
    return adj.select(m.alias("lo"), v.alias("hi"), u).where(hi > u).drop("u")  # m(u) <= u < v


def _small_star(e: DataFrame) -> DataFrame:
    """Link u and its smaller neighbours to m = the smallest of them; self-loops dropped."""
    lo, hi, m = F.col("lo"), F.col("hi"), F.col("m")
    s = e.select(F.min(lo).over(Window.partitionBy(hi)).alias("m"), lo, hi)
    return _explode(s, ("lo", "hi"), (m, lo), (m, hi)).where(lo < hi).distinct()


def _census(e: DataFrame) -> tuple[int, int]:
    """(edges, nodes that break "a star forest centred on minima"), in one Spark action.

    ``e`` is a set of (lo, hi) with lo < hi; it is such a forest iff no node is the ``hi``
    of two edges and no node is both a ``hi`` and a ``lo``.
    """
    side = _explode(e, ("n", "h"), (F.col("hi"), F.lit(1)), (F.col("lo"), F.lit(0)))
    node = side.groupBy("n").agg(F.sum("h").alias("h"), F.min("h").alias("low"))
    bad = (F.col("h") > 1) | ((F.col("h") >= 1) & (F.col("low") == 0))
    row = node.agg(F.sum("h"), F.count(F.when(bad, 1))).first()
    assert row is not None  # a global aggregate has exactly one row
    return int(row[0] or 0), int(row[1])


def _cut(df: DataFrame, checkpoint: bool) -> DataFrame:
    return cut(df) if checkpoint else df


def check_labels(edges: DataFrame, labels: DataFrame) -> None:
    """Check that both ends of every edge (``src``, ``dst``) carry one and the same label.

    Raises:
        ComponentsInconsistent: naming one offending edge and its ends' labels.

    Notes:
        Catches split components, unlabelled nodes and nodes with two labels (one of the
        join rows then differs). It cannot see two components merged under one label.
    """
    lab = labels.select(F.col("node").cast("string"), F.col("label").cast("string"))
    j = (
        _ends(edges)
        .join(lab.toDF("src", "ls"), "src", "left")
        .join(lab.toDF("dst", "ld"), "dst", "left")
    )
    bad = j.where(F.col("ls").isNull() | F.col("ld").isNull() | (F.col("ls") != F.col("ld")))
    row = bad.select("src", "dst", "ls", "ld").first()
    if row is not None:
        raise ComponentsInconsistent(
            f"edge ({row.src!r}, {row.dst!r}) has labels {row.ls!r} and {row.ld!r}"
        )


def connected_components(
    edges: DataFrame, *, max_rounds: int = 50, checkpoint: bool = True
) -> Components:
    """Label every node of ``edges`` with the smallest node id of its connected component.

    Args:
        edges: string columns ``src``, ``dst``; undirected, duplicates, both directions and
            self-loops allowed.
        max_rounds: rounds allowed before giving up (at least 1, as the config checks;
            O(log^2 n) suffice, per the paper).
        checkpoint: cut the lineage every round (``session.cut``: a reliable checkpoint
            where a checkpoint directory is set, else a local one). False keeps the
            lineage: every round then recomputes all earlier ones; for small inputs and
            debugging only.

    Returns:
        ``labels`` (``node``, ``label``; one row per node of any edge) and the round count.

    Raises:
        ComponentsDidNotConverge: still no star forest after ``max_rounds`` rounds.
        ComponentsInconsistent: the final check found an input edge whose ends differ.

    Notes:
        A label is its component's minimum in Spark's binary string order (UTF-8 bytes, i.e.
        code points, as Python orders str): a function of the graph alone, independent of
        partitioning, shuffle partitions and AQE. Ids are cast to string; rows with a null
        end are ignored; a node seen only in self-loops is its own component; empty edges
        give empty labels (after 1 round). Convergence: after each round one aggregation
        counts nodes that are the larger end of two edges, or both a larger and a smaller
        end; at zero every component is a star centred on its minimum, a fixed point of
        both steps, so the next round would change nothing (this fires one round before a
        compare-with-previous check would). Neither step links two components, and
        ``check_labels`` then confirms that none was split. A local checkpoint lost with its
        executor fails the job; it is never silently recomputed.
    """
    ends = _cut(_ends(edges), checkpoint)  # read the input once: every use sees the same edges
    lo, hi = F.least("src", "dst").alias("lo"), F.greatest("src", "dst").alias("hi")
    e = ends.where(F.col("src") != F.col("dst")).select(lo, hi).distinct()
    for rounds in range(1, max_rounds + 1):
        e = _cut(_small_star(_large_star(e)), checkpoint)
        n_edges, off = _census(e)
        _log.info("round %d: %d edges, %d nodes not yet on a star", rounds, n_edges, off)
        if not off:
            break
    else:
        raise ComponentsDidNotConverge(
            f"connected components did not converge within {max_rounds} round(s) ({off} nodes "
            f"not yet attached to their component's minimum); raise config key 'max_rounds'"
        )
    nodes = ends.select(F.explode(F.array("src", "dst")).alias("node")).distinct()
    star = e.select(F.col("hi").alias("node"), F.col("lo").alias("label"))
    joined = nodes.join(star, "node", "left")
    labels = _cut(joined.select("node", F.coalesce("label", "node").alias("label")), checkpoint)
    check_labels(ends, labels)
    return Components(labels, rounds)
