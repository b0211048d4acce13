"""The fingerprint run: every document of a corpus fingerprinted with a frozen preset.

Writes under the config's output: ``fingerprints`` (doc_id, fingerprint bigint,
fingerprint_hex, pipeline), ``rejects`` (doc_id, reason) and, last, ``_MANIFEST.json``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import SparkSession

from neardup_udfs import __version__
from neardup_udfs.io import MANIFEST_NAME, read_documents
from neardup_udfs.presets import Pipeline, resolve
from neardup_udfs.stages.fingerprint import fingerprint
from neardup_udfs.storage import HadoopStorage, join

__all__ = ["Config", "Summary", "pipeline_of", "run"]

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
