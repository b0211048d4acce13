"""Output directories of a dedup run as report.html reads them, written with pyarrow (no
Spark): any clusters, pairs and samples (``make_output``), and the standard one, with every
section of the page (``standard_output``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

COUNTS = {
    "input": 12345,
    "rejected": 3,
    "exact_duplicates": 10,
    "candidates": 4567,
    "verified": 890,
    "clusters": 2,
    "kept": 12295,
    "removed": 47,
    "chained": 4,
    "hot_buckets": 25,
    "rounds": 3,
}
SECONDS = {
    "read": 2.5,
    "exact": 1.0,
    "fingerprint": 3.0,
    "candidates": 4.0,
    "verify": 2.0,
    "components": 1.5,
    "select": 0.5,
    "write": 0.5,
}


def words(tag: str, n: int) -> str:
    """n distinct words, so that texts built from different tags share no 16-byte run."""
    return " ".join(f"{tag}{i}q{(i * 7919) % 997}" for i in range(n))


def write_parquet(directory: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    directory.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), directory / "part-00000.parquet")
    (directory / "_SUCCESS").write_bytes(b"")  # as Spark leaves it


def score_field(metric: str) -> pa.Field:
    return pa.field(metric, pa.int32() if metric == "distance" else pa.float64())


def make_output(
    root: Path,
    clusters: dict[str, list[tuple[str, float]]],
    *,
    metric: str = "similarity",
    pairs: list[tuple[str, str, float]] | None = None,
    samples: list[dict[str, Any]] | None = None,
    counts: dict[str, int] | None = None,
    config: dict[str, Any] | None = None,
    hot_buckets: list[dict[str, Any]] | None = None,
    bands: list[dict[str, int]] | None = None,
) -> Path:
    """An output directory; ``clusters`` maps representative id -> [(member id, score)]."""
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    histogram: dict[str, int] = {}
    for rep, members in clusters.items():
        rows.append({"doc_id": rep, "cluster_id": rep, "is_representative": True, metric: None})
        for doc_id, score in members:
            rows.append(
                {"doc_id": doc_id, "cluster_id": rep, "is_representative": False, metric: score}
            )
        size = str(len(members) + 1)
        histogram[size] = histogram.get(size, 0) + 1
    schema = pa.schema(
        [
            pa.field("doc_id", pa.string()),
            pa.field("cluster_id", pa.string()),
            pa.field("is_representative", pa.bool_()),
            score_field(metric),
        ]
    )
    write_parquet(root / "clusters", rows, schema)
    if pairs is not None:
        pair_schema = pa.schema([("a", pa.string()), ("b", pa.string()), score_field(metric)])
        pair_rows = [{"a": a, "b": b, metric: s} for a, b, s in pairs]
        write_parquet(root / "pairs", pair_rows, pair_schema)
    if samples is not None:
        sample_schema = pa.schema(
            [
                pa.field("cluster_id", pa.string()),
                pa.field("doc_id", pa.string()),
                pa.field("is_representative", pa.bool_()),
                score_field(metric),
                pa.field("text", pa.string()),
                pa.field("truncated", pa.bool_()),
            ]
        )
        write_parquet(root / "samples", samples, sample_schema)
    method = "simhash" if metric == "distance" else "minhash"
    report = {
        "counts": counts or COUNTS,
        "seconds": SECONDS,
        "pipeline": {"id": "semblance/1;bands=25,k=125,rows=5", "version": "semblance/1"},
        "config": config or {"method": method, "threshold": None, "k": 3, "input": "corpus"},
        "cluster_size_histogram": histogram,
        "hot_buckets": hot_buckets or [],
        "neardup_version": "0.1.0",
    }
    if bands is not None:
        report["bands"] = bands
    (root / "report.json").write_text(json.dumps(report, indent=2))
    return root


def sample(cid: str, doc_id: str, text: str, score: float | None = None) -> dict[str, Any]:
    return {
        "cluster_id": cid,
        "doc_id": doc_id,
        "is_representative": doc_id == cid,
        "similarity": score,
        "text": text,
        "truncated": False,
    }


BANDS = [{"band": b, "candidates": 300 - 10 * b, "verified": 40 + b} for b in range(25)]
SHARED = words("shared", 60)
REP_TEXT = f"{words('rep', 20)} R\n{SHARED}\nR {words('reptail', 20)}"
NEAR_TEXT = f"{words('near', 25)} M\n{SHARED}\nM {words('neartail', 10)}"
UNRELATED = words("other", 80)


def standard_output(root: Path) -> Path:
    """The output in which every section of the page has something to show: a cluster of
    eight and one of two with their pairs and scores, two singles, samples sharing a passage,
    hot buckets and band counts."""
    members = [(f"d{i:02d}", 0.70 + i / 100) for i in range(2, 9)]
    clusters: dict[str, list[tuple[str, float]]] = {
        "d01": members,
        "d10": [("d11", 0.95)],
        "d20": [],
        "d21": [],
    }
    pairs = [("d01", d, s) for d, s in members] + [("d10", "d11", 0.95)]
    samples = [sample("d01", "d01", REP_TEXT), sample("d01", "d02", NEAR_TEXT, 0.72)]
    samples += [sample("d01", f"d{i:02d}", UNRELATED + f" {i}", 0.8) for i in range(3, 9)]
    samples += [sample("d10", "d10", "short"), sample("d10", "d11", "short!", 0.95)]
    buckets = [{"band": i % 5, "key": f"{i:016x}", "size": 1000 + i} for i in range(25)]
    return make_output(
        root,
        clusters,
        pairs=pairs,
        samples=samples,
        hot_buckets=buckets,
        bands=BANDS,
    )
