"""The I/O floor a dedup run is measured against: a bare Spark job that reads JSON lines and
writes them as Parquet, nothing else.

    spark-submit --master local[2] bench/io_floor.py INPUT.jsonl OUTPUT_DIR

Spark's defaults, no properties file: what a new user's ``spark-submit`` of the dedup job
pays before any deduplication (the JVM, the session, schema inference, one read, one write).
"""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: io_floor.py INPUT.jsonl OUTPUT_DIR", file=sys.stderr)
        return 2
    spark = SparkSession.builder.appName("neardup-io-floor").getOrCreate()
    try:
        spark.read.json(argv[0]).write.mode("overwrite").parquet(argv[1])
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
