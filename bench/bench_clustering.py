"""Benchmark: anchored against connected (single-link) clustering on the real texts.

    python bench/bench_clustering.py [--every N] [--scale N] [--json PATH]

For each clustering and each MinHash verification (hybrid, the default, and exact), one run
of ``jobs/dedup.py``'s ``run`` over the real Debian texts of ``../shared/data/text``
(copyright files, the licence texts of a crawl; fortunes; man pages) and over the bench's
sample of N documents in near-duplicate families built from them (``lib.corpora``'s
``scaled_corpus``, 50,000 by default; 0 skips it), default configuration otherwise.
Scored against exact ground truth on the job's own shingle sets (semblance word 3-shingles):

- removal precision: of the removed documents that have shingles, the share whose exact
  Jaccard with the document kept in their place (their cluster's representative) is >= the
  threshold 0.7; a removed exact duplicate of its representative counts as 1;
- residual duplication: of the pairs with exact J >= 0.75, the share of which both
  documents were kept (a pair counts as resolved otherwise);
- the cluster stage's seconds (both clusterings cluster the same verified edges).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from lib.corpora import load_real, scaled_corpus, write_corpus
from lib.scoring import score
from lib.spark import start_spark
from lib.truth import exact_pairs, shingle_sets
from pyspark.sql import SparkSession

from neardup_udfs.config import load_config
from neardup_udfs.runs import dedup as dedup_job


def runs(
    spark: Any, name: str, docs: list[tuple[str, str]], verifications: list[str]
) -> list[dict[str, Any]]:
    """Both clusterings under each verification on ``docs``, scored."""
    corpus = write_corpus(f"clustering-{name}", docs)
    ids = [d for d, _ in docs]
    sets = shingle_sets([t for _, t in docs], 3)
    truth = exact_pairs(sets)
    results = []
    for verification in verifications:
        for clustering in ("connected", "anchored"):
            out = corpus.path.parent / "runs" / f"clustering-{name}-{clustering}-{verification}"
            config = load_config(
                None,
                input=str(corpus.path),
                output=str(out),
                input_format="jsonl",
                id_col="id",
                text_col="text",
                verification=verification,
                clustering=clustering,
                outputs=("docs", "clusters"),
            )
            s = dedup_job.run(spark, config)
            row = {
                "corpus": name,
                "clustering": clustering,
                "verification": verification,
                "docs": len(docs),
                "verified": s.verified,
                "removed": s.removed,
                "rounds": s.rounds,
                "driver_edges": s.driver_edges,
                "cluster_seconds": round(s.seconds.get("cluster", 0.0), 1),
                "total_seconds": round(sum(s.seconds.values()), 1),
            } | score(spark, out, ids, sets, truth)
            print(json.dumps(row), flush=True)
            results.append(row)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--every", type=int, default=1, help="take every Nth real text")
    p.add_argument("--json", type=Path, help="write the figures here too")
    p.add_argument("--scale", type=int, default=50_000, help="sample size (0: none)")
    p.add_argument(
        "--verifications", default="hybrid,exact", help="comma-separated (also: estimate)"
    )
    p.add_argument(
        "--spark-defaults",
        action="store_true",
        help="a session with Spark's own defaults (local[2] only), as a new user runs it",
    )
    args = p.parse_args(argv)
    real = [d for part in load_real().values() for d in part[:: args.every]]
    corpora = [("real", real)]
    if args.scale:
        corpora.append((f"sample{args.scale}", scaled_corpus(real, args.scale).docs))
    if args.spark_defaults:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        spark = SparkSession.builder.master("local[2]").getOrCreate()
    else:
        spark = start_spark()
    results = []
    for name, docs in corpora:
        results += runs(spark, name, docs, args.verifications.split(","))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
