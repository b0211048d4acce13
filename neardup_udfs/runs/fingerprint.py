"""The fingerprint run: every document of a corpus fingerprinted with a frozen preset.

Writes under the config's output: ``fingerprints`` (doc_id, fingerprint bigint,
fingerprint_hex, pipeline), ``rejects`` (doc_id, reason) and, last, ``_MANIFEST.json``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace

from pyspark.sql import SparkSession

from neardup_udfs import __version__
from neardup_udfs.clock import LostRecords
from neardup_udfs.config import FingerprintConfig
from neardup_udfs.io.report_files import MANIFEST_NAME
from neardup_udfs.io.storage import HadoopStorage, join
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.runtime import RunScope, run_scoped
from neardup_udfs.stages.fingerprint import fingerprint
from neardup_udfs.stages.read import read_checked

__all__ = ["Summary", "run"]

log = logging.getLogger("neardup.fingerprint")

OUTPUT_NAMES = ("fingerprints", "rejects")


@dataclass(frozen=True)
class Summary:
    input: int
    fingerprinted: int
    rejected: int
    pipeline: str


def run(spark: SparkSession, config: FingerprintConfig) -> Summary:
    """Fingerprint ``config.input`` into ``config.output``; returns the counts.

    Notes:
        The input is read as the dedup job reads it (``stages.read.read_checked``), and every
        record of it ends in exactly one of ``fingerprints`` and ``rejects``: a record the
        reader refuses is a reject with the reader's reason (a file Spark skips for its name,
        a malformed JSON line as ``<file URI>#L<line>``, a JSON text value that is not a
        string, a null id or text, a text over ``max_text_bytes``, a repeated ``doc_id``),
        as is one the fingerprint stage refuses. Raises LostRecords (and writes no manifest)
        unless fingerprinted + rejected = input. Everything the run persists is released
        before it returns or raises.
    """
    return run_scoped(spark, "fingerprint", config, _run)


def _run(spark: SparkSession, config: FingerprintConfig, scope: RunScope) -> Summary:
    pipeline = config.pipeline()
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    claim_run_output(  # before any work; without overwrite, an earlier run's outputs stay whole
        store,
        config,
        scope,
        job="fingerprint",
        names=OUTPUT_NAMES,
        keep_existing=not config.overwrite,
    )
    read = read_checked(spark, config, scope.cache)
    stage = fingerprint(read.good, pipeline)
    out = replace(stage, rejects=read.rejects.unionByName(stage.rejects))  # read's and stage's
    write_frames(
        store,
        config.output,
        {"fingerprints": out.fingerprints, "rejects": out.rejects},
        OUTPUT_NAMES,
        OUTPUT_NAMES,
    )
    fingerprinted = spark.read.parquet(join(config.output, "fingerprints")).count()
    rejected = spark.read.parquet(join(config.output, "rejects")).count()
    n_input = read.rows
    if fingerprinted + rejected != n_input:
        raise LostRecords(
            f"lost records: {n_input} read, {fingerprinted} fingerprinted, {rejected} rejected"
        )
    summary = Summary(n_input, fingerprinted, rejected, pipeline.id)
    manifest = {
        "job": "fingerprint",
        "neardup_version": __version__,
        "pipeline": {"id": pipeline.id, "version": pipeline.version},
        "config": config.to_dict(),
        "counts": asdict(summary),
        "input": read.stats,
    }
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    store.write_bytes(join(config.output, MANIFEST_NAME), text.encode("utf-8"))
    log.info("fingerprinted %d documents, rejected %d (%s)", fingerprinted, rejected, pipeline.id)
    return summary
