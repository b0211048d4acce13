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
