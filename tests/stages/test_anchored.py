"""The anchored cluster stage against a sequential oracle written here, independently."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.greedy import greedy_keep
from neardup_udfs.stages.anchored import (
    AnchoredDidNotFinish,
    anchored_representatives,
)
from tests.greedy_oracle import Edge, oracle
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark


def _frames(spark, edges: list[Edge], rank: dict[str, int]):  # type: ignore[no-untyped-def]
    e = spark.createDataFrame(edges or [], "a string, b string, similarity double")
    r = spark.createDataFrame(sorted(rank.items()), "node string, rank int")
    return e, r


def _run(spark, edges: list[Edge], rank: dict[str, int], **kw):  # type: ignore[no-untyped-def]
    e, r = _frames(spark, edges, rank)
    got = anchored_representatives(e, r, score="similarity", higher_is_closer=True, **kw)
    table = {row.node: (row.rep, row.similarity) for row in got.assignment.collect()}
    return got, table


def _random_graph(rng: random.Random, tag: str, n: int, p: float) -> list[Edge]:
    edges = []
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < p:
                edges.append((f"{tag}{i}", f"{tag}{j}", round(rng.uniform(0.7, 1.0), 2)))
    return edges


def _chain(tag: str, n: int) -> list[Edge]:
    return [(f"{tag}{i:03d}", f"{tag}{i + 1:03d}", 0.8) for i in range(n - 1)]


def test_chains_ranks_and_ties(spark) -> None:  # type: ignore[no-untyped-def]
    """Three small graphs in one input (a disjoint union decides each part alone):
    A ~ B ~ C: single link would remove C in favour of A; anchored keeps A and C, and B goes
    to the closer one. A hub ranked first takes its star; a hub ranked last is removed and
    ties between x and y (0.8) and goes to x, ranked first."""
    star = [("x", "hub", 0.8), ("y", "hub", 0.8), ("hub", "z", 0.75)]
    edges = [("A", "B", 0.8), ("B", "C", 0.9)] + star
    edges += [(f"2{a}", f"2{b}", s) for a, b, s in star]
    rank = {"A": 0, "B": 1, "C": 2, "hub": 0, "x": 1, "y": 2, "z": 3}
    rank |= {"2hub": 9, "2x": 1, "2y": 2, "2z": 3}
    got, table = _run(spark, edges, rank, max_driver_edges=0)
    assert {n: table[n] for n in "ABC"} == {"A": ("A", 1.0), "B": ("C", 0.9), "C": ("C", 1.0)}
    assert all(table[n][0] == "hub" for n in ("hub", "x", "y", "z"))
    assert table["2hub"] == ("2x", 0.8) and {table[f"2{n}"][0] for n in "xyz"} == {"2x", "2y", "2z"}
    assert (got.rounds, got.driver_edges) == (1, 0)
    whole, on_driver = _run(spark, edges, rank)  # the graph fits on the driver: no round
    assert on_driver == table and (whole.rounds, whole.driver_edges) == (0, len(edges))


def test_random_graphs_equal_the_oracle_and_the_kernel(spark) -> None:  # type: ignore[no-untyped-def]
    """Many random graphs at once (their disjoint union is one input), and long chains
    ordered along the rule (a round per two links)."""
    rng = random.Random(7)
    edges: list[Edge] = []
    for g in range(40):
        edges += _random_graph(rng, f"g{g}_", rng.randint(2, 14), rng.choice([0.1, 0.3, 0.7]))
    edges += _chain("c", 16)
    nodes = sorted({n for a, b, _ in edges for n in (a, b)})
    rank = {n: rng.randint(0, 5) for n in nodes}  # many ties: the id decides
    rank.update({n: 0 for n in nodes if n.startswith("c")})
    got, table = _run(spark, edges, rank, max_driver_edges=0)
    assert table == oracle(edges, rank)
    assert got.driver_edges == 0 and got.rounds >= 8  # the chain alone needs 8
    assert _run(spark, edges, rank)[1] == table  # the whole graph on the driver
    order = sorted(nodes, key=lambda n: (rank[n], n))
    place = {n: i for i, n in enumerate(order)}
    keep = greedy_keep(len(order), [place[a] for a, _, _ in edges], [place[b] for _, b, _ in edges])
    assert {n for n, k in zip(order, keep, strict=True) if k} == {
        n for n, (rep, _) in table.items() if rep == n
    }


def test_the_driver_finishes_a_long_chain_with_the_same_result(spark) -> None:  # type: ignore[no-untyped-def]
    """Rounds until nothing is left, rounds until the remainder fits on the driver, and the
    driver alone (the graph fits before the first round) give one result."""
    edges = _chain("c", 11) + [("c010", "d", 0.95)]
    rank = {n: 0 for a, b, _ in edges for n in (a, b)}
    rounds, whole = _run(spark, edges, rank, max_driver_edges=0)
    finished, table = _run(spark, edges, rank, max_rounds=3, max_driver_edges=5)
    driver, alone = _run(spark, edges, rank)
    assert table == whole == alone == oracle(edges, rank)
    assert (rounds.rounds, rounds.driver_edges) == (6, 0)
    assert (finished.rounds, finished.driver_edges) == (3, 11 - 6)
    assert (driver.rounds, driver.driver_edges) == (0, 11)


def test_a_remainder_too_large_for_the_driver_fails_naming_both_limits(spark) -> None:  # type: ignore[no-untyped-def]
    edges = _chain("c", 20)
    rank = {n: 0 for a, b, _ in edges for n in (a, b)}
    with pytest.raises(AnchoredDidNotFinish, match="max_rounds = 2.*max_driver_edges = 5"):
        _run(spark, edges, rank, max_rounds=2, max_driver_edges=5)


def test_fixed_nodes_are_removed_first_and_never_represent(spark) -> None:  # type: ignore[no-untyped-def]
    """An indexed document decided before the first round: its match is removed in its
    favour, and the match's neighbour is then kept (not removed through the match)."""
    e, r = _frames(spark, [("m", "n", 0.9)], {"m": 0, "n": 1})
    fixed = spark.createDataFrame(
        [("m", "indexed-1", 0.8)], "node string, rep string, similarity double"
    )
    got = anchored_representatives(
        e, r, score="similarity", higher_is_closer=True, fixed=fixed
    ).assignment
    assert sorted(tuple(x) for x in got.collect()) == [
        ("m", "indexed-1", 0.8),
    ]  # n's only edge went with m: n is a singleton, outside the assignment


def test_distances_assign_to_the_nearest(spark) -> None:  # type: ignore[no-untyped-def]
    e = spark.createDataFrame(
        [("a", "b", 3), ("b", "c", 1), ("a", "c", 2)], "a string, b string, distance int"
    )
    r = spark.createDataFrame([("a", 0), ("b", 2), ("c", 1)], "node string, rank int")
    got = anchored_representatives(e, r, score="distance", higher_is_closer=False)
    assert sorted(tuple(x) for x in got.assignment.collect()) == [
        ("a", "a", 0),
        ("b", "a", 3),
        ("c", "a", 2),
    ]


def test_unranked_node_is_an_error(spark) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="'b'.*without a rank"):
        _run(spark, [("a", "b", 0.9)], {"a": 0})


def test_same_result_whatever_the_partitioning(spark) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(3)
    edges: list[Edge] = []
    for g in range(20):
        edges += _random_graph(rng, f"g{g}_", 10, 0.3)
    rank = {n: rng.randint(0, 3) for a, b, _ in edges for n in (a, b)}
    want = oracle(edges, rank)
    for parts, aqe, broadcast in ((1, "false", "-1"), (7, "true", "10485760")):
        with spark_conf(spark, **{"spark.sql.shuffle.partitions": str(parts),
                                  "spark.sql.adaptive.enabled": aqe,
                                  "spark.sql.autoBroadcastJoinThreshold": broadcast}):  # fmt: skip
            assert _run(spark, edges, rank, max_driver_edges=0)[1] == want


SMALL_SPARK_EXAMPLES = settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# up to 60 edges (duplicates and self-loops among them) over 31 nodes, and each node's rank
RAW_EDGES = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 30), st.sampled_from([0.7, 0.8, 0.9])),
    max_size=60,
)
RANKS = st.lists(st.integers(0, 4), min_size=31, max_size=31)


@SMALL_SPARK_EXAMPLES
@given(RAW_EDGES, RANKS, st.integers(1, 4), st.sampled_from([0, 4, 10_000]))
def test_hypothesis_graphs_with_a_round_limit(spark, raw, ranks, max_rounds, to_driver) -> None:  # type: ignore[no-untyped-def]
    """Any round limit and driver limit: the oracle's result, or the error naming both."""
    edges = [(f"n{a:02d}", f"n{b:02d}", s) for a, b, s in raw]
    rank = {f"n{i:02d}": r for i, r in enumerate(ranks)}
    try:
        _, table = _run(spark, edges, rank, max_rounds=max_rounds, max_driver_edges=to_driver)
    except AnchoredDidNotFinish as err:  # more than to_driver edges left after the limit
        assert f"max_rounds = {max_rounds} " in str(err) and f"= {to_driver}:" in str(err)
        return
    assert table == oracle(edges, rank)


@SMALL_SPARK_EXAMPLES
@given(RAW_EDGES, RANKS)
def test_a_graph_known_to_fit_is_settled_on_the_driver(spark, raw, ranks) -> None:  # type: ignore[no-untyped-def]
    """``edge_count`` within ``max_driver_edges``: no round and no count, the whole graph
    collected once (``driver_edges`` is the count given), and the oracle's result, duplicate
    edges and self-loops included."""
    edges = [(f"n{a:02d}", f"n{b:02d}", s) for a, b, s in raw]
    rank = {f"n{i:02d}": r for i, r in enumerate(ranks)}
    got, table = _run(spark, edges, rank, max_driver_edges=100, edge_count=len(edges))
    assert (got.rounds, got.driver_edges) == (0, len(edges))
    assert table == oracle(edges, rank)


def test_driver_path_names_an_unranked_node(spark) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="'b'.*without a rank"):
        _run(spark, [("a", "b", 0.9)], {"a": 0}, edge_count=1)
