"""The spans run: where do documents overlap? Aligned passages (winnowing spans) between
the pairs of a dedup run, or between query documents and a corpus (provenance).

Writes under the config's output: spans/, pair_summary/, rejects/, report.json, and
_MANIFEST.json last (the success marker).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs.clock import StageClock
from neardup_udfs.config import SPANS_OUTPUTS, SpansConfig
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.report_files import run_keys, write_report
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.runtime import Cache, RunScope, run_scoped
from neardup_udfs.schemas import CLUSTER_ID, DOC_ID, IS_REPRESENTATIVE, TEXT, A, B
from neardup_udfs.stages.read import read_checked
from neardup_udfs.stages.winnowing import (
    WINNOW_VERSION,
    aligned_spans,
    covered_bytes,
    fingerprints,
    hot_hashes,
    winnow_id,
)

__all__ = ["Summary", "run"]

log = logging.getLogger("neardup.spans")


@dataclass
class Summary:
    """What a run did; also the counts of report.json."""

    mode: str = ""  # pairs | provenance
    input: int = 0  # rows read from --input (accepted + rejected)
    query: int = 0  # rows read from --query (accepted + rejected)
    rejected: int = 0  # rows of either in rejects/
    pairs: int = 0  # pairs mode: pairs asked for; provenance: pairs with a span
    pairs_missing_docs: int = 0  # pairs mode: a side is not among the (accepted) documents
    spans: int = 0
    hot_hashes: int = 0  # provenance: hashes skipped (> max_doc_freq occurrences in the corpus)
    pipeline: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"


def run(spark: SparkSession, config: SpansConfig) -> Summary:
    """Compute the aligned spans and per-pair coverage of ``config``.

    Notes:
        Pairs mode: for every pair (a, b) of the dedup output, the spans are
        ``winnow.overlaps(text_a, text_b, kgram_bytes, window)`` (``a_start`` = PosA,
        ``b_start`` = PosB).
        Provenance mode: for every query document, ``winnow.Index.matches(query)`` over an
        index of the corpus (``a`` = the query, ``b`` = the corpus document), except that
        hashes occurring more than ``max_doc_freq`` times in the corpus (in one document or
        many) are skipped and counted.
        Neither applies the kernels' ``MAX_RESULTS`` budget.
    """
    return run_scoped(spark, "spans", config, _run)


def _read(
    spark: SparkSession, config: SpansConfig, path: str, cache: Cache, summary: Summary
) -> tuple[DataFrame, DataFrame, int]:
    """Accepted documents (``doc_id, text``), rejects (with ``source`` = path), rows read;
    the input's report under ``summary.input_stats[path]``."""
    read = read_checked(spark, config, cache, path)
    summary.input_stats[path] = read.stats
    rejects = read.rejects.withColumn("source", F.lit(path))
    return read.good.select(DOC_ID, TEXT), rejects, read.rows


def _pairs(spark: SparkSession, path: str) -> DataFrame:
    """``a, b`` from a dedup output's ``pairs/`` (a, b) or ``clusters/`` (member, its
    representative as a)."""
    try:
        df = spark.read.parquet(path)
    except Exception as e:  # noqa: BLE001 - Spark raises AnalysisException subclasses
        raise InputError(f"pairs path {path!r} cannot be read as parquet: {e}") from None
    if {A, B} <= set(df.columns):
        return df.select(F.col(A).cast("string").alias(A), F.col(B).cast("string").alias(B))
    if {DOC_ID, CLUSTER_ID, IS_REPRESENTATIVE} <= set(df.columns):
        members = df.where(~F.col(IS_REPRESENTATIVE))
        return members.select(F.col(CLUSTER_ID).alias(A), F.col(DOC_ID).alias(B))
    raise InputError(
        f"pairs path {path!r} has neither columns a, b (pairs/) nor doc_id, cluster_id, "
        f"is_representative (clusters/); columns: {', '.join(df.columns)}"
    )


def _run(spark: SparkSession, config: SpansConfig, run: RunScope) -> Summary:
    cache = run.cache
    clock = StageClock(log)
    mode = "pairs" if config.pairs else "provenance"
    summary = Summary(
        mode=mode, pipeline=winnow_id(config.kgram_bytes, config.window), seconds=clock.seconds
    )
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    also = [("query", config.query), ("pairs", config.pairs)]
    claim_run_output(store, config, run, job="spans", names=SPANS_OUTPUTS, also=also)
    kgram_bytes, window = config.kgram_bytes, config.window

    with clock.stage("read"):
        docs, rejects, summary.input = _read(spark, config, config.input, cache, summary)
        if config.query:
            queries, query_rejects, summary.query = _read(
                spark, config, config.query, cache, summary
            )
            rejects = rejects.unionByName(query_rejects)
        summary.rejected = rejects.count()

    if config.pairs:
        with clock.stage("fingerprint"):
            asked, summary.pairs = cache.materialize(_pairs(spark, config.pairs).distinct())
            ids = docs.select(DOC_ID)
            known = asked.join(ids.withColumnRenamed(DOC_ID, A), A, "left_semi").join(
                ids.withColumnRenamed(DOC_ID, B), B, "left_semi"
            )
            known, n_known = cache.materialize(known)
            summary.pairs_missing_docs = summary.pairs - n_known
            ends = known.select(F.col(A).alias(DOC_ID)).union(known.select(F.col(B).alias(DOC_ID)))
            used = docs.join(ends.distinct(), DOC_ID, "left_semi")
            fps = cache.keep(fingerprints(used, kgram_bytes, window))
            a_lengths = b_lengths = used.select(DOC_ID, F.octet_length(TEXT).alias("bytes"))
        with clock.stage("spans"):
            wanted = known.select(F.col(B).alias("q_id"), F.col(A).alias("d_id"))
            raw = aligned_spans(fps, fps, kgram_bytes, pairs=wanted)
            spans = _oriented(raw, a="d", b="q")  # overlaps(a, b) walks b: b is the query
            spans, summary.spans = cache.materialize(spans)
            summary_pairs = known.select(F.col(A).alias("a_id"), F.col(B).alias("b_id"))
    else:
        with clock.stage("fingerprint"):
            corpus = cache.keep(fingerprints(docs, kgram_bytes, window))
            query = cache.keep(fingerprints(queries, kgram_bytes, window))
            hot, summary.hot_hashes = cache.materialize(hot_hashes(corpus, config.max_doc_freq))
            corpus = corpus.join(hot.select("hash"), "hash", "left_anti")
            a_lengths = queries.select(DOC_ID, F.octet_length(TEXT).alias("bytes"))
            b_lengths = docs.select(DOC_ID, F.octet_length(TEXT).alias("bytes"))
        with clock.stage("spans"):
            raw = aligned_spans(query, corpus, kgram_bytes)
            spans = _oriented(raw, a="q", b="d")
            spans, summary.spans = cache.materialize(spans)
            summary_pairs = spans.select("a_id", "b_id").distinct()
            summary.pairs = summary_pairs.count()

    with clock.stage("summary"):
        pair_summary = _pair_summary(spans, summary_pairs, a_lengths, b_lengths)

    with clock.stage("write"):
        frames = {"spans": spans, "pair_summary": pair_summary, "rejects": rejects}
        write_frames(store, config.output, frames, config.outputs, SPANS_OUTPUTS)

    write_report(
        store,
        config.output,
        "spans",
        **run_keys(summary, config, (summary.pipeline, WINNOW_VERSION), "mode"),
        mode=mode,
        spark=run.spark_report(spark),
    )
    return summary


def _oriented(raw: DataFrame, *, a: str, b: str) -> DataFrame:
    """``aligned_spans`` rows (q_*, d_*) as ``a_id, b_id, a_start, b_start, length``."""
    return raw.select(
        F.col(f"{a}_id").alias("a_id"),
        F.col(f"{b}_id").alias("b_id"),
        F.col(f"{a}_start").alias("a_start"),
        F.col(f"{b}_start").alias("b_start"),
        "length",
    )


def _pair_summary(
    spans: DataFrame, pairs: DataFrame, a_lengths: DataFrame, b_lengths: DataFrame
) -> DataFrame:
    """``a_id, b_id, spans, a_covered, b_covered, a_fraction, b_fraction`` per pair: bytes of
    each document inside at least one span (overlaps counted once) and their share of it."""
    keys = ["a_id", "b_id"]
    counts = spans.groupBy(*keys).agg(F.count("*").alias("spans"))
    a_cov = covered_bytes(spans, keys, "a_start", "length").withColumnRenamed("covered", "a_cov")
    b_cov = covered_bytes(spans, keys, "b_start", "length").withColumnRenamed("covered", "b_cov")
    a_len = a_lengths.select(F.col(DOC_ID).alias("a_id"), F.col("bytes").alias("a_bytes"))
    b_len = b_lengths.select(F.col(DOC_ID).alias("b_id"), F.col("bytes").alias("b_bytes"))
    out = (
        pairs.join(counts, keys, "left")
        .join(a_cov, keys, "left")
        .join(b_cov, keys, "left")
        .join(a_len, "a_id", "left")
        .join(b_len, "b_id", "left")
        .fillna(0, ["spans", "a_cov", "b_cov"])
    )

    def fraction(covered: str, size: str) -> Column:
        return F.when(F.col(size) > 0, F.col(covered) / F.col(size)).otherwise(F.lit(0.0))

    return out.select(
        "a_id",
        "b_id",
        F.col("spans").cast("bigint"),
        F.col("a_cov").cast("bigint").alias("a_covered"),
        F.col("b_cov").cast("bigint").alias("b_covered"),
        fraction("a_cov", "a_bytes").alias("a_fraction"),
        fraction("b_cov", "b_bytes").alias("b_fraction"),
    )
