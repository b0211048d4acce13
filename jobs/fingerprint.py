"""spark-submit entry point: fingerprint every document of a corpus with a frozen preset.

    spark-submit --properties-file conf/spark-local.conf jobs/fingerprint.py \\
        --input DIR_OR_FILES --output DIR [--input-format text|jsonl|parquet] \\
        [--id-col NAME] [--text-col NAME] [--preset ditto/2] [--char N] [--word N]

Writes ``DIR/fingerprints`` (doc_id, fingerprint bigint, fingerprint_hex, pipeline),
``DIR/rejects`` (doc_id, reason) and, last, ``DIR/_MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import SparkSession

from neardup_udfs import __version__
from neardup_udfs.io import INPUT_FORMATS, InputError, read_documents, write_manifest
from neardup_udfs.presets import Pipeline, PresetError, resolve
from neardup_udfs.stages.fingerprint import fingerprint

log = logging.getLogger("neardup.fingerprint")


@dataclass(frozen=True)
class Config:
    input: str
    output: str
    input_format: str = "text"
    id_col: str | None = None
    text_col: str = "text"
    preset: str = "ditto/2"
    char: int | None = None
    word: int | None = None
    overwrite: bool = False


@dataclass(frozen=True)
class Summary:
    input: int
    fingerprinted: int
    rejected: int
    pipeline: str


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fingerprint.py", description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="input path (file, directory or glob)")
    p.add_argument("--output", required=True, help="output directory (local filesystem)")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text")
    p.add_argument("--id-col", default=None, help="id column (jsonl/parquet)")
    p.add_argument("--text-col", default="text", help="text column (jsonl/parquet)")
    p.add_argument("--preset", default="ditto/2")
    p.add_argument("--char", type=int, default=None, help="ditto/2 char n-gram size")
    p.add_argument("--word", type=int, default=None, help="ditto/2 word n-gram size")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    return p


def pipeline_of(config: Config) -> Pipeline:
    options: dict[str, Any] = {"char": config.char, "word": config.word}
    return resolve(config.preset, **{k: v for k, v in options.items() if v is not None})


def run(spark: SparkSession, config: Config) -> Summary:
    """Fingerprint ``config.input`` into ``config.output``; returns the counts."""
    pipeline = pipeline_of(config)
    docs = read_documents(spark, config.input, config.input_format, config.id_col, config.text_col)
    out = fingerprint(docs, pipeline)
    mode = "overwrite" if config.overwrite else "errorifexists"
    out.fingerprints.write.mode(mode).parquet(os.path.join(config.output, "fingerprints"))
    out.rejects.write.mode(mode).parquet(os.path.join(config.output, "rejects"))
    fingerprinted = spark.read.parquet(os.path.join(config.output, "fingerprints")).count()
    rejected = spark.read.parquet(os.path.join(config.output, "rejects")).count()
    n_input = docs.count()
    if fingerprinted + rejected != n_input:
        raise RuntimeError(
            f"lost records: {n_input} read, {fingerprinted} fingerprinted, {rejected} rejected"
        )
    summary = Summary(n_input, fingerprinted, rejected, pipeline.id)
    write_manifest(
        config.output,
        {
            "job": "fingerprint",
            "neardup_version": __version__,
            "pipeline": {"id": pipeline.id, "version": pipeline.version},
            "config": asdict(config),
            "counts": asdict(summary),
        },
    )
    log.info("fingerprinted %d documents, rejected %d (%s)", fingerprinted, rejected, pipeline.id)
    return summary


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
