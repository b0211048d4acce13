"""The library's results as plain values, comparable across engines and across processes
(a classic session here, a Spark Connect one in tests/connect_dedup.py): a frame's rows, and
what a ``dedup`` run, a run against an index and an index query give."""

from __future__ import annotations

from typing import Any


def sorted_rows(df: Any) -> list[list[Any]]:
    """A frame's rows as sorted lists."""
    return sorted([list(r) for r in df.collect()], key=repr)


def dedup_rows(r: Any) -> dict[str, Any]:
    """A ``dedup`` result asked for its pairs: its clusters, kept ids, kept columns, removed
    rows, pairs, rejects and counts."""
    assert r.pairs is not None
    return {
        "clusters": sorted_rows(r.clusters),
        "kept": sorted_rows(r.kept.select("id")),
        "kept_columns": r.kept.columns,
        "removed": sorted_rows(r.removed),
        "pairs": sorted_rows(r.pairs),
        "rejects": sorted_rows(r.rejects),
        "counts": r.counts,
    }


def against_rows(r: Any) -> dict[str, Any]:
    """A ``dedup`` result against an index: its clusters, matches, kept ids and counts."""
    assert r.matches is not None
    return {
        "clusters": sorted_rows(r.clusters),
        "matches": sorted_rows(r.matches),
        "kept": sorted_rows(r.kept.select("id")),
        "counts": r.counts,
    }


def query_rows(q: Any) -> dict[str, Any]:
    """A ``query_index`` result: its results and counts."""
    return {"results": sorted_rows(q.results), "counts": q.counts}


EDGE_TEXTS = (
    ("calm", "The harbour lay calm under a pale winter sky while gulls argued over the nets."),
    ("ledger", "Quarterly ledger totals were reconciled against the bank statements on Monday."),
    ("orbit", "A small probe entered a stable orbit after a burn of exactly four minutes."),
)
"""Three texts with no near-duplicate among them (nor in the test index)."""

EDGE_ENGINES = ("auto", "driver", "spark")
"""Every engine ``dedup(df)`` offers."""

AGAINST_ENGINES = ("auto", "spark")
"""Every engine ``dedup(df, against=...)`` offers (the config refuses ``driver``)."""


def edge_frames(spark: Any, real: Any) -> dict[str, Any]:
    """The edge frames every session must run: one with no near-duplicate, an empty one,
    and the first 40 real texts by id (whose every other text is in the test index)."""
    schema = "id string, text string"
    return {
        "no_duplicate": spark.createDataFrame(list(EDGE_TEXTS), schema),
        "empty": spark.createDataFrame([], schema),
        "some_indexed": real.select("id", "text").orderBy("id").limit(40),
    }


def edge_rows(spark: Any, real: Any, index: str) -> dict[str, Any]:
    """``dedup`` of the edge frames, as plain rows: the frames with no near-duplicate and
    with no row on every engine (``frame/engine``, with their pairs), the partly indexed
    and the empty frame against ``index`` on every engine that matches an index
    (``frame/engine/against``)."""
    import neardup_udfs

    frames = edge_frames(spark, real)
    found: dict[str, Any] = {}
    for name in ("no_duplicate", "empty"):
        for engine in EDGE_ENGINES:
            with neardup_udfs.dedup(frames[name], engine=engine, pairs=True) as r:
                found[f"{name}/{engine}"] = dedup_rows(r)
    for name in ("some_indexed", "empty"):
        for engine in AGAINST_ENGINES:
            with neardup_udfs.dedup(frames[name], engine=engine, against=index) as r:
                found[f"{name}/{engine}/against"] = against_rows(r)
    return found
