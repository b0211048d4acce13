"""spark-submit entry point: fingerprint every document of a corpus with a frozen preset.

    spark-submit --properties-file conf/spark-local.conf jobs/fingerprint.py \\
        --input DIR_OR_FILES --output DIR [--input-format text|jsonl|parquet] \\
        [--id-col NAME] [--text-col NAME] [--preset ditto/2] [--char N] [--word N]

Writes ``DIR/fingerprints`` (doc_id, fingerprint bigint, fingerprint_hex, pipeline),
``DIR/rejects`` (doc_id, reason) and, last, ``DIR/_MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import SparkSession

from neardup_udfs import __version__
from neardup_udfs.io import INPUT_FORMATS, MANIFEST_NAME, InputError, read_documents
from neardup_udfs.presets import Pipeline, PresetError, resolve
from neardup_udfs.stages.fingerprint import fingerprint
from neardup_udfs.storage import HadoopStorage, join

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
    p.add_argument("--output", required=True, help="output directory (any filesystem Spark writes)")
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
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    store.delete(join(config.output, MANIFEST_NAME))  # a failed run leaves no success marker
    mode = "overwrite" if config.overwrite else "errorifexists"
    out.fingerprints.write.mode(mode).parquet(join(config.output, "fingerprints"))
    out.rejects.write.mode(mode).parquet(join(config.output, "rejects"))
    fingerprinted = spark.read.parquet(join(config.output, "fingerprints")).count()
    rejected = spark.read.parquet(join(config.output, "rejects")).count()
    n_input = docs.count()
    if fingerprinted + rejected != n_input:
        raise RuntimeError(
            f"lost records: {n_input} read, {fingerprinted} fingerprinted, {rejected} rejected"
        )
    summary = Summary(n_input, fingerprinted, rejected, pipeline.id)
    manifest = {
        "job": "fingerprint",
        "neardup_version": __version__,
        "pipeline": {"id": pipeline.id, "version": pipeline.version},
        "config": asdict(config),
        "counts": asdict(summary),
    }
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    store.write_bytes(join(config.output, MANIFEST_NAME), text.encode("utf-8"))
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
