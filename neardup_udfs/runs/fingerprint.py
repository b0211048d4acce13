"""The fingerprint run: every document of a corpus fingerprinted with a frozen preset.

Writes under the config's output: ``fingerprints`` (doc_id, fingerprint bigint,
fingerprint_hex, pipeline), ``rejects`` (doc_id, reason) and, last, ``_MANIFEST.json``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass

from pyspark.sql import SparkSession

from neardup_udfs import __version__
from neardup_udfs.config import FingerprintConfig
from neardup_udfs.io.readers import MANIFEST_NAME, read_documents
from neardup_udfs.io.storage import HadoopStorage, join
from neardup_udfs.stages.fingerprint import fingerprint

__all__ = ["Summary", "run"]

log = logging.getLogger("neardup.fingerprint")


@dataclass(frozen=True)
class Summary:
    input: int
    fingerprinted: int
    rejected: int
    pipeline: str


def run(spark: SparkSession, config: FingerprintConfig) -> Summary:
    """Fingerprint ``config.input`` into ``config.output``; returns the counts."""
    pipeline = config.pipeline()
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
        "config": config.to_dict(),
        "counts": asdict(summary),
    }
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    store.write_bytes(join(config.output, MANIFEST_NAME), text.encode("utf-8"))
    log.info("fingerprinted %d documents, rejected %d (%s)", fingerprinted, rejected, pipeline.id)
    return summary
