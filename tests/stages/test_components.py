"""Connected components (Large-Star / Small-Star) on a local SparkSession."""

from __future__ import annotations

import logging
import random

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame

from neardup_udfs.stages.components import (
    ComponentsDidNotConverge,
    ComponentsInconsistent,
    check_labels,
    connected_components,
)
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

EDGES = "src string, dst string"
LABELS = "node string, label string"


def _union_find(edges: list[tuple[str, str]]) -> dict[str, str]:
    """node -> smallest node of its component, the naive way."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {x: find(x) for x in parent}


def _random_edges(seed: int, nodes: int = 300, edges: int = 250) -> list[tuple[str, str]]:
    """A sparse random graph on ``s<seed>-<i>`` (unpadded: string order != numeric order)."""
    rng = random.Random(seed)
    ids = [f"s{seed}-{i}" for i in range(nodes)]
    return [(rng.choice(ids), rng.choice(ids)) for _ in range(edges)]


def _path(ids: list[str]) -> list[tuple[str, str]]:
    return list(zip(ids, ids[1:], strict=False))


def _labels(spark, edges, **kw) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Labels as a dict, checking there is one row per node; ``edges``: list or DataFrame."""
    df = edges if isinstance(edges, DataFrame) else spark.createDataFrame(edges, EDGES)
    rows = connected_components(df, **kw).labels.collect()
    assert len(rows) == len({r.node for r in rows}), "one row per node"
    return {r.node: r.label for r in rows}


CHAIN = [("c", "b"), ("a", "b"), ("c", "d"), ("d", "c"), ("y", "x"), ("x", "y"), ("z", "z")]
CHAIN_LABELS = [("a", "a"), ("b", "a"), ("c", "a"), ("d", "a"), ("x", "x"), ("y", "x"), ("z", "z")]


def test_chain_pair_and_self_loop(spark) -> None:  # type: ignore[no-untyped-def]
    edges = CHAIN + [("b", None), (None, None)]  # a null end is no edge and no node
    got = connected_components(spark.createDataFrame(edges, EDGES))
    assert_df_equality(
        got.labels,
        spark.createDataFrame(CHAIN_LABELS, LABELS),
        ignore_row_order=True,
        ignore_nullable=True,
    )
    assert got.rounds == 2


def test_without_checkpoints(spark) -> None:  # type: ignore[no-untyped-def]
    # One round (a-b-c is a star after it): the lineage is never cut, so keep this small.
    edges = [("c", "b"), ("a", "b"), ("y", "x"), ("z", "z")]
    want = {"a": "a", "b": "a", "c": "a", "x": "x", "y": "x", "z": "z"}
    assert _labels(spark, edges, checkpoint=False) == want


def test_random_graphs_match_union_find(spark) -> None:  # type: ignore[no-untyped-def]
    # Several seeds and densities in one disjoint union: one Spark run, many components.
    edges: list[tuple[str, str]] = []
    for seed, n_edges in [(1, 150), (2, 250), (3, 400), (4, 600)]:
        edges += _random_edges(seed, edges=n_edges)
    want = _union_find(edges)
    assert len(set(want.values())) > 20  # singletons, small trees and giant components
    assert _labels(spark, edges) == want


def test_labels_ignore_partitioning_and_aqe(spark) -> None:  # type: ignore[no-untyped-def]
    edges = _random_edges(7, edges=250)
    want = _union_find(edges)
    assert len(set(want.values())) > 10  # a giant component and small ones; 4 rounds
    # few and many partitions, both AQE and broadcast settings, without the full product
    for parts, aqe, broadcast in [(1, "true", "10485760"), (7, "false", "-1")]:
        with spark_conf(spark, **{"spark.sql.shuffle.partitions": str(parts),
                                  "spark.sql.adaptive.enabled": aqe,
                                  "spark.sql.autoBroadcastJoinThreshold": broadcast}):  # fmt: skip
            df = spark.createDataFrame(edges, EDGES).repartition(parts)
            assert _labels(spark, df) == want, (parts, aqe)


def test_long_paths_converge(spark, caplog) -> None:  # type: ignore[no-untyped-def]
    # Two disjoint 200-node paths: one with ids in path order, one with ids shuffled.
    ordered = [f"a{i:03d}" for i in range(200)]
    shuffled = [f"b{i:03d}" for i in range(200)]
    random.Random(11).shuffle(shuffled)
    edges = spark.createDataFrame(_path(ordered) + _path(shuffled), EDGES)
    with caplog.at_level(logging.INFO, logger="neardup.components"):
        got = connected_components(edges, max_rounds=50)
    assert 1 <= got.rounds <= 50
    assert len([r for r in caplog.records if r.name == "neardup.components"]) == got.rounds
    labels = {r.node: r.label for r in got.labels.collect()}
    assert labels == {n: n[0] + "000" for n in ordered + shuffled}


def test_max_rounds_exceeded_fails_loudly(spark) -> None:  # type: ignore[no-untyped-def]
    edges = spark.createDataFrame(_path([f"n{i:03d}" for i in range(200)]), EDGES)
    with pytest.raises(ComponentsDidNotConverge, match=r"within 1 round\(s\).*'max_rounds'"):
        connected_components(edges, max_rounds=1)


def test_check_labels_catches_wrong_labels(spark) -> None:  # type: ignore[no-untyped-def]
    edges = spark.createDataFrame([("a", "b"), ("b", "c"), ("x", "y")], EDGES)
    right = [("a", "a"), ("b", "a"), ("c", "a"), ("x", "x"), ("y", "x")]
    check_labels(edges, spark.createDataFrame(right, LABELS))
    split = [("a", "a"), ("b", "a"), ("c", "c"), ("x", "x"), ("y", "x")]
    with pytest.raises(ComponentsInconsistent, match=r"edge \('b', 'c'\) has labels 'a' and 'c'"):
        check_labels(edges, spark.createDataFrame(split, LABELS))
    missing = right[:-1]
    with pytest.raises(ComponentsInconsistent, match=r"\('x', 'y'\)"):
        check_labels(edges, spark.createDataFrame(missing, LABELS))


def test_empty_edges_give_empty_labels(spark) -> None:  # type: ignore[no-untyped-def]
    got = connected_components(spark.createDataFrame([], EDGES))
    assert got.rounds == 1
    assert got.labels.columns == ["node", "label"]
    assert got.labels.count() == 0
