"""Run by tests/test_library.py in a process of its own (a process holds one kind of
session): ``neardup_udfs.dedup`` and the column functions on a local Spark Connect session.

    python tests/connect_dedup.py INPUT.jsonl[.gz] OUT.json [INDEX]

Writes the results as JSON: for each engine the clusters, kept ids, removed rows, pairs,
rejects and counts; with INDEX, the same run against it (clusters, matches, kept); the
column functions' values of the first rows; the session kind.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from library_rows import against_rows, dedup_rows, query_rows, sorted_rows


def main(src: str, out: str, index: str | None = None) -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import neardup_udfs
    from neardup_udfs import functions as nf

    spark = SparkSession.builder.remote("local[2]").getOrCreate()
    found: dict[str, Any] = {"session": type(spark).__module__}
    df = spark.read.json(src)
    conf_before = dict(spark.conf.getAll)
    for engine in ("spark", "driver"):
        with neardup_udfs.dedup(df, engine=engine, pairs=True) as r:
            found[engine] = {**dedup_rows(r), "spark": r.report["spark"]}
    conf_after = dict(spark.conf.getAll)
    found["conf_changed"] = sorted(
        k for k in conf_before.keys() | conf_after.keys() if conf_before.get(k) != conf_after.get(k)
    )
    if index is not None:
        with neardup_udfs.dedup(df, engine="spark", against=index) as r:
            found["against"] = against_rows(r)
        with neardup_udfs.query_index(df, index, top=3) as q:
            found["query"] = query_rows(q)
    first = df.orderBy("id").limit(20)
    values = first.select(
        "id",
        nf.minhash("text").alias("minhash"),
        nf.simhash("text").alias("simhash"),
        nf.simhash("text", "fingerprint").alias("fingerprint"),
        nf.band_keys(nf.minhash("text")).alias("bands"),
    )
    found["functions"] = sorted_rows(values)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(found, fh)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
