"""The index run: build, grow (add) and query a persistent near-duplicate index.

build creates the index directory (an error if it already holds an index); add appends a
batch atomically (a batch id already committed is a no-op). query writes under the config's
output: results/ (query_id, rank, doc_id, distance | similarity), rejects/, report.json and
_MANIFEST.json.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from neardup_udfs.clock import StageClock
from neardup_udfs.config import IndexConfig
from neardup_udfs.index import store as index_store
from neardup_udfs.index.store import IndexStoreError
from neardup_udfs.io.outputs import check_directory, refuse_overlap
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.report_files import run_keys, write_report
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.runtime import RunScope, run_scoped
from neardup_udfs.schemas import DOC_ID, REASON
from neardup_udfs.stages.exact import exact_keys
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.index import IndexReader, add_batch, query_near, query_similar
from neardup_udfs.stages.normalize import EMPTY, is_empty, prepare
from neardup_udfs.stages.read import read_checked

__all__ = ["Summary", "run"]

log = logging.getLogger("neardup.index")


@dataclass
class Summary:
    """What a run did."""

    action: str = ""
    input: int = 0
    rejected: int = 0
    indexed: int = 0  # build/add: documents this batch added (0: already committed)
    index_documents: int = 0  # documents in the index after the run
    batches: int = 0
    queries: int = 0
    results: int = 0
    pipeline: str = ""
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"
    seconds: dict[str, float] = field(default_factory=dict)


def run(spark: SparkSession, config: IndexConfig) -> Summary:
    """Do ``config.action`` on the index ``config.index``; returns the counts.

    Raises:
        InputError: no index to add to or query, an index where build would create one, or
            an index built with another pipeline or LSH shape (the message names both).
    """
    try:
        return run_scoped(spark, f"index {config.action}", config, _run)
    except IndexStoreError as e:
        raise InputError(str(e)) from None


def _run(spark: SparkSession, config: IndexConfig, run: RunScope) -> Summary:
    cache = run.cache
    clock = StageClock(log)
    summary = Summary(action=config.action, seconds=clock.seconds)
    store = HadoopStorage(spark)
    check_directory(store, config.index, "index")
    if config.action != "query":  # the index is this run's output
        refuse_overlap(store, "index", config.index, [("input", config.input)])
    exists = index_store.exists(config.index, store)
    if config.action == "build" and exists:
        raise IndexStoreError(f"{config.index!r} already holds an index: use add")
    if config.action != "build" and not exists:
        raise IndexStoreError(f"no index at {config.index!r} (no {index_store.MANIFEST})")
    if config.action == "query":
        return _query(spark, config, run, clock, summary)

    pipeline = config.pipeline()
    # checked (manifest, batch folders) before any work: a damaged index fails here
    previous = index_store.check_index(config.index, store) if exists else None
    if previous is not None:
        index_store.check_compatible(
            previous, pipeline, config.max_distance, config.index, config.hamming_blocks
        )
    manifest = previous or index_store.new_manifest(
        config.preset_name, pipeline, config.max_distance, config.hamming_scheme()
    )
    summary.pipeline = pipeline.id
    with clock.stage("read") as rows:
        read = read_checked(spark, config, cache)
        good, n_good, rejects = read.good, read.n_good, read.rejects
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = summary.input, n_good

    with clock.stage("index") as rows:
        prepared = prepare(good, pipeline)
        if pipeline.normalization.active:  # read three times below: normalized once
            prepared, _ = cache.materialize(prepared)
        docs = prepared.where(~is_empty(pipeline))
        # a page with no visible text has nothing to match: a reject of the batch, not an entry
        empty = prepared.where(is_empty(pipeline)).select(DOC_ID, F.lit(EMPTY).alias(REASON))
        valued = sketch(docs, pipeline).join(exact_keys(docs, pipeline), DOC_ID)
        added = add_batch(
            config.index,
            manifest,
            previous,
            config.index_batch_id,
            valued,
            rejects.unionByName(empty) if pipeline.normalization.active else rejects,
            keep=cache.keep,
        )
        summary.indexed = added.batch.documents if added.batch else 0
        if added.batch:  # the read's rejects and the pages with no visible text
            summary.rejected = added.batch.rejected
        summary.index_documents = added.manifest.documents
        summary.batches = len(added.manifest.batches)
        rows.rows_in, rows.rows_out = n_good, summary.indexed
    return summary


def _query(
    spark: SparkSession, config: IndexConfig, run: RunScope, clock: StageClock, summary: Summary
) -> Summary:
    cache = run.cache
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    manifest = index_store.check_index(config.index, store)  # damaged: fails before work
    pipeline = index_store.pipeline_of(manifest)
    summary.pipeline = pipeline.id
    summary.index_documents, summary.batches = manifest.documents, len(manifest.batches)
    also = [("the index", config.index)]
    claim_run_output(store, config, run, job="index-query", names=("results", "rejects"), also=also)
    with clock.stage("read") as rows:
        read = read_checked(spark, config, cache)
        good, n_good, rejects = read.good, read.n_good, read.rejects
        summary.input, summary.rejected, summary.queries = read.rows, read.n_rejected, n_good
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = summary.input, n_good
    with clock.stage("query") as rows:
        queries = sketch(prepare(good, pipeline), pipeline).withColumnRenamed(DOC_ID, "query_id")
        reader = IndexReader(spark, config.index, manifest)
        if manifest.kind == "simhash":
            results = query_near(reader, queries, config.max_distance)
        else:
            results = query_similar(reader, queries, config.top, cache.keep)
        results, summary.results = cache.materialize(results)
        rows.rows_in, rows.rows_out = n_good, summary.results
    with clock.stage("write"):
        write_frames(
            store,
            config.output,
            {"results": results, "rejects": rejects},
            ("results", "rejects"),
            ("results", "rejects"),
        )
    write_report(
        store,
        config.output,
        "index-query",
        **run_keys(summary, config, (pipeline.id, pipeline.version), "action"),
        index=index_store.describe(manifest),
        spark=run.spark_report(spark, read.partitions),
    )
    return summary
