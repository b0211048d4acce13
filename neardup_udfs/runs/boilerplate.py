"""The boilerplate run: find the passages many documents of a corpus share and write the
documents without them.

Writes under the config's output: regions/, cleaned/, boilerplate_top/, rejects/,
report.json, and _MANIFEST.json last (the success marker).

With ``keep = "one"`` each maximal region survives in one document, its keeper (the first
holder by ``representative``; see ``stages.passages`` for the exact semantics); regions/
then also has ``kept_by, kept, holders, maximal`` and report.json a ``keep`` object.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from neardup_udfs.clock import LostRecords, StageClock
from neardup_udfs.config import BOILERPLATE_OUTPUTS, BoilerplateConfig
from neardup_udfs.io.report_files import run_keys, write_report
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.runtime import RunScope, run_scoped
from neardup_udfs.schemas import DOC_ID, TEXT
from neardup_udfs.stages.passages import (
    keep_counts,
    keep_one,
    passage_docs,
    region_signatures,
    representative_keys,
)
from neardup_udfs.stages.read import read_checked
from neardup_udfs.stages.winnowing import (
    WINNOW_VERSION,
    doc_freq,
    fingerprints,
    remove_regions,
    winnow_id,
)
from neardup_udfs.udfs import whole_characters_udf

__all__ = ["Summary", "pipeline_id", "run", "top_passages"]

log = logging.getLogger("neardup.boilerplate")


@dataclass
class Summary:
    """What a run did; also the counts of report.json."""

    input: int = 0
    rejected: int = 0
    fingerprints: int = 0
    regions: int = 0
    docs_with_boilerplate: int = 0
    bytes_in: int = 0
    bytes_removed: int = 0
    pipeline: str = ""
    keep: dict[str, Any] = field(default_factory=lambda: {"mode": "none"})  # report.json "keep"
    seconds: dict[str, float] = field(default_factory=dict)
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"


def run(spark: SparkSession, config: BoilerplateConfig) -> Summary:
    """Find ``config.input``'s boilerplate regions and write the cleaned documents.

    Notes:
        Per document, the regions are exactly ``winnow.Index.cover(text, min_docs, min_run)``
        of an index holding every (non-rejected) document, or, with ``group_col``, every
        document of the same group. With ``keep = "one"`` only the regions that do not
        survive are removed: a region survives iff its signature (the set of its run's
        fingerprint hashes) is maximal (strictly inside no other region's signature, within
        the group) and its document is the signature's keeper (the holder first by
        ``representative``, none above ``max_keep_docs`` holders). Raises LostRecords (and
        writes no manifest) unless every input row is in ``cleaned/`` or ``rejects/``.
    """
    return run_scoped(spark, "boilerplate", config, _run)


def _run(spark: SparkSession, config: BoilerplateConfig, run: RunScope) -> Summary:
    cache = run.cache
    clock = StageClock(log)
    summary = Summary(pipeline=pipeline_id(config), seconds=clock.seconds)
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    claim_run_output(store, config, run, job="boilerplate", names=BOILERPLATE_OUTPUTS)
    group = config.group_col
    keep = config.keep == "one"

    with clock.stage("read"):
        require = [("group_col", group)] if group is not None else []
        if keep and config.representative == "earliest" and config.order_col:
            require.append(("order_col", config.order_col))
        read = read_checked(spark, config, cache, require=require)
        good, n_good, rejects, summary.rejected = (
            read.good,
            read.n_good,
            read.rejects,
            read.n_rejected,
        )
        summary.input, summary.input_stats = read.rows, read.stats
        text_col = read.text_col

    with clock.stage("fingerprint"):
        fps = fingerprints(good, config.kgram_bytes, config.window)
        if group is not None:
            fps = fps.join(good.select(DOC_ID, F.col(group)), DOC_ID)
        fps, summary.fingerprints = cache.materialize(fps)

    with clock.stage("cover"):
        freq = doc_freq(fps, group)
        # signatures under keep none too: boilerplate_top/ counts a passage's holders by them
        signed = region_signatures(
            fps, freq, config.kgram_bytes, config.min_docs, config.min_run, group
        )
        signed, summary.regions = cache.materialize(signed)
        regions = signed.select(DOC_ID, "start", "length")
        summary.docs_with_boilerplate = regions.select(DOC_ID).distinct().count()

    removed, out_regions = regions, regions
    if keep:
        with clock.stage("keep"):
            ranks = representative_keys(good, config.representative, config.order_col)
            passages = keep_one(signed, ranks, group, config.max_keep_docs)
            cache.keep(passages.signatures)
            cache.keep(passages.regions)
            summary.keep = {
                "mode": "one",
                "rule": config.representative,
                "max_keep_docs": config.max_keep_docs,
                **keep_counts(passages),
            }
            decided = passages.regions
            removed = decided.where(~F.col("kept")).select(DOC_ID, "start", "length")
            out_regions = decided.select(
                DOC_ID, "start", "length", "kept_by", "kept", "holders", "maximal"
            )

    with clock.stage("clean"):
        cleaned = remove_regions(good.select(DOC_ID, TEXT), removed)
        sizes = good.select(DOC_ID, F.octet_length(TEXT).alias("__in"))
        measured = cleaned.join(sizes, DOC_ID).withColumn("__out", F.octet_length(TEXT))
        measured, n_cleaned = cache.materialize(measured)
        totals = measured.agg(F.sum("__in"), F.sum(F.col("__in") - F.col("__out"))).first()
        summary.bytes_in = int(totals[0] or 0) if totals else 0
        summary.bytes_removed = int(totals[1] or 0) if totals else 0
        top = top_passages(good, signed, config.top, config.min_docs)

    if n_cleaned != n_good or n_cleaned + summary.rejected != summary.input:
        raise LostRecords(
            f"input {summary.input}: cleaned {n_cleaned} + rejected {summary.rejected} != input"
        )

    with clock.stage("write"):
        docs = good.drop(TEXT) if text_col != TEXT else good
        clean = measured.select(DOC_ID, F.col(TEXT).alias("__clean"), "removed_fraction")
        out_docs = docs.join(clean, DOC_ID).withColumn(text_col, F.col("__clean")).drop("__clean")
        frames = {
            "regions": out_regions,
            "cleaned": out_docs,
            "boilerplate_top": top,
            "rejects": rejects,
        }
        write_frames(store, config.output, frames, config.outputs, BOILERPLATE_OUTPUTS)

    write_report(
        store,
        config.output,
        "boilerplate",
        **run_keys(summary, config, (summary.pipeline, WINNOW_VERSION), "keep"),
        keep=summary.keep,
        removed_fraction=round(summary.bytes_removed / summary.bytes_in, 6)
        if summary.bytes_in
        else 0.0,
        spark=run.spark_report(spark, read.partitions),
    )
    return summary


def pipeline_id(config: BoilerplateConfig) -> str:
    """The run's pipeline id: ``winnow_id`` of its k-gram size and window, then, with
    ``keep = "one"``, ``;keep=one,rule=<representative>`` (and ``,max_keep_docs=N`` when
    set): kept copies differ by rule, so their outputs must not be mixed."""
    base = winnow_id(config.kgram_bytes, config.window)
    if config.keep != "one":
        return base
    limit = f",max_keep_docs={config.max_keep_docs}" if config.max_keep_docs is not None else ""
    return f"{base};keep=one,rule={config.representative}{limit}"


def top_passages(docs: DataFrame, signed: DataFrame, top: int, min_docs: int) -> DataFrame:
    """``passage, length, docs``: the ``top`` boilerplate passages held by the most documents
    (then the longest, then by signature), of those held by ``min_docs`` documents or more.

    A passage is a region signature of ``signed`` (``doc_id, start, length, signature``):
    ``docs`` counts the documents holding it, with a region of that signature or of one
    containing it (``stages.passages.passage_docs``), so copies cut differently at their
    edges and copies inside longer regions count. It is shown as its first region of exactly
    that signature (the smallest id, then start): ``length`` that region's bytes, the
    passage the region widened to whole UTF-8 characters (a region may start or end inside
    one), decoded, as a person reads it."""
    text = F.col(TEXT)
    if isinstance(docs.schema[TEXT].dataType, StringType):
        text = F.encode(text, "UTF-8")
    held = passage_docs(signed).where(F.col("docs") >= min_docs)
    order = [F.col("docs").desc(), F.col("length").desc(), F.col("signature")]
    best = held.orderBy(*order).limit(top)
    shown = best.join(docs.select(DOC_ID, text.alias("__bytes")), DOC_ID)  # at most ``top``
    passage = whole_characters_udf()(F.col("__bytes"), F.col("start"), F.col("length"))
    return shown.orderBy(*order).select(passage.alias("passage"), "length", "docs")
