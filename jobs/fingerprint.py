"""spark-submit entry point: fingerprint every document of a corpus with a frozen preset.

    spark-submit --properties-file conf/spark-local.conf jobs/fingerprint.py \\
        --input DIR_OR_FILES --output DIR [--input-format text|jsonl|parquet] \\
        [--id-col NAME] [--text-col NAME] [--preset ditto/2] [--char N] [--word N]

Parses the arguments and calls ``neardup_udfs.runs.fingerprint.run``, which writes
``DIR/fingerprints`` (doc_id, fingerprint bigint, fingerprint_hex, pipeline),
``DIR/rejects`` (doc_id, reason) and, last, ``DIR/_MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession

from neardup_udfs.io import INPUT_FORMATS, InputError
from neardup_udfs.presets import PresetError
from neardup_udfs.runs.fingerprint import Config, Summary, pipeline_of, run

__all__ = ["Config", "Summary", "build_parser", "main", "pipeline_of", "run"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fingerprint.py", description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="input path (file, directory or glob)")
    p.add_argument("--output", required=True, help="output directory (any filesystem Spark writes)")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument("--id-col", default=None, help="id column (jsonl/parquet)")
    p.add_argument("--text-col", default="text", help="text column (jsonl/parquet)")
    p.add_argument("--preset", default="ditto/2")
    p.add_argument("--char", type=int, default=None, help="ditto/2 char n-gram size")
    p.add_argument("--word", type=int, default=None, help="ditto/2 word n-gram size")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    config = Config(**vars(args))
    try:
        pipeline_of(config)  # fail on a bad preset or option before Spark starts
    except PresetError as e:
        print(f"fingerprint.py: error: {e}", file=sys.stderr)
        return 2
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.appName("neardup-fingerprint").getOrCreate()
    try:
        summary = run(spark, config)
    except InputError as e:
        print(f"fingerprint.py: error: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(
        f"{summary.input} document(s): {summary.fingerprinted} fingerprinted, "
        f"{summary.rejected} rejected ({summary.pipeline}) -> {config.output}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
