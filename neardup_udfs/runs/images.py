"""The images run: read (files or WARC records), pHash, identical hashes, the shared
near-duplicate stages (``runs.near``), outputs and the report.

Writes under the config's output: clusters/ (path, cluster_id, is_representative,
distance), hashes/ (path, phash hex, width, height, format, animated, go_reference, url,
pipeline), rejects/ (path, reason), pairs/ when asked, report.json, report.html (counts,
stage times, distances, sampled clusters as thumbnails) and, last, _MANIFEST.json.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs.clock import LostRecords, StageClock
from neardup_udfs.config import IMAGE_OUTPUTS, ImagesConfig
from neardup_udfs.driver.settings import NearCounts, NearSettings
from neardup_udfs.io.input_files import HIDDEN_REASON
from neardup_udfs.io.report_files import run_keys, write_report
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.presets import resolve
from neardup_udfs.report import image_report_page
from neardup_udfs.runs.near import Clusters, NearDuplicates
from neardup_udfs.runtime import RunScope, run_scoped
from neardup_udfs.schemas import (
    CLUSTER_ID,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    LEADER,
    LOST_BYTES,
    REASON,
)
from neardup_udfs.stages.fingerprint import to_hex
from neardup_udfs.stages.images import PATH, group_identical, hash_images, read_images, shown_images
from neardup_udfs.stages.read import input_stats, reason_counts
from neardup_udfs.stages.summaries import score_summary

__all__ = [
    "PIPELINE",
    "ImagesFound",
    "Summary",
    "cluster_images",
    "images_report",
    "near_settings",
    "run",
]

log = logging.getLogger("neardup.images")

PIPELINE = resolve("phash")  # fingerprint's pHash; kind "simhash": a 64-bit Hamming value


@dataclass
class Summary(NearCounts):
    """What a run did; also the counts of report.json."""

    input: int = 0  # files (or WARC records), those Spark passes over included
    rejected: int = 0
    hashed: int = 0
    identical: int = 0  # images whose pHash equals another's (joined without the LSH)
    pipeline: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"


def run(spark: SparkSession, config: ImagesConfig) -> Summary:
    """Cluster the near-duplicate images of ``config.input`` into ``config.output``.

    Notes:
        Raises LostRecords (and writes no manifest) unless every input image is kept,
        removed as a near-duplicate of a kept one, or rejected.
    """
    return run_scoped(
        spark,
        "images",
        config,
        _run,
        {"spark.sql.execution.arrow.maxRecordsPerBatch": str(config.batch_images)},
    )


def _run(spark: SparkSession, config: ImagesConfig, run: RunScope) -> Summary:
    clock = StageClock(log)
    summary = Summary(pipeline=PIPELINE.id, seconds=clock.seconds)
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    claim_run_output(store, config, run, job="images", names=IMAGE_OUTPUTS)

    found = cluster_images(spark, config, read_images(spark, config), run, clock, summary)
    verified = found.pairs

    with clock.stage("write"):
        frames = {
            "clusters": found.clusters,
            "hashes": found.hashes,
            "rejects": found.rejects,
            "pairs": verified,
        }
        write_frames(store, config.output, frames, config.outputs, IMAGE_OUTPUTS)

    with clock.stage("report"):  # the page's data: a Spark aggregate and a bounded sample
        scores = score_summary(verified, DISTANCE, "verified pairs")
        try:
            shown = shown_images(found.clustered.clusters, found.good, config).toArrow()
        except Exception as e:  # the outputs are written: a page without samples, not a failure
            log.error("report.html shows no clusters (%s: %s)", type(e).__name__, e)
            shown = None

    write_report(
        store,
        config.output,
        "images",
        pages=[image_report_page(shown)],
        **images_report(config, summary, found, scores, run.spark_report(spark)),
    )
    return summary


def images_report(
    config: ImagesConfig,
    summary: Summary,
    found: ImagesFound,
    scores: Mapping[str, Any],
    spark: Mapping[str, Any],
) -> dict[str, Any]:
    """What report.json says of an images run (``io.report_files.report_of``'s keywords)."""
    near = found.near
    return dict(
        **run_keys(summary, config, (PIPELINE.id, PIPELINE.version)),
        cluster_size_histogram={str(k): v for k, v in found.clustered.histogram.items()},
        cluster=near.cluster_path,
        hot_buckets=near.hot,
        hamming=near.settings.hamming_scheme().describe(),
        scores=dict(scores),
        spark=dict(spark),
    )


@dataclass(frozen=True)
class ImagesFound:
    """An images run's results as frames, before anything is written
    (:func:`cluster_images`)."""

    clusters: DataFrame  # path, cluster_id, is_representative, distance
    hashes: DataFrame  # path, phash (hex), width, height, format, animated, go_reference, url,
    # pipeline
    rejects: DataFrame  # path, reason
    pairs: DataFrame  # a, b, distance: the verified pairs
    good: DataFrame  # the hashed images: hash_images' columns
    near: NearDuplicates
    clustered: Clusters


def cluster_images(
    spark: SparkSession,
    config: ImagesConfig,
    images: DataFrame,
    run: RunScope,
    clock: StageClock,
    summary: Summary,
) -> ImagesFound:
    """The images run between its read and its outputs, shared by the job and the library:
    ``images`` (:func:`read_images`' columns) hashed, identical hashes grouped, pairs found
    and clustered; ``summary`` holds the counts.

    Raises:
        LostRecords: unless every image is kept, removed as a near-duplicate of a kept one,
            or rejected.
    """
    cache = run.cache
    with clock.stage("read + hash") as rows:
        tagged = cache.keep(hash_images(images, config))
        good = tagged.where(F.col(REASON).isNull()).drop(REASON)
        rejects = tagged.where(F.col(REASON).isNotNull()).select(PATH, REASON)
        accounted = tagged.select(
            F.col(PATH).alias(DOC_ID), REASON, LOST_BYTES, F.col("file").alias("path")
        )
        counts = reason_counts(accounted)  # computes and counts tagged, in one Spark job
        summary.hashed = counts.pop(None, 0)
        summary.rejected = sum(counts.values())
        summary.input = summary.hashed + summary.rejected
        summary.input_stats = input_stats(accounted, counts=counts)
        if counts.get(HIDDEN_REASON):  # as the text jobs' report.json says it
            summary.input_stats["skipped_files"] = counts[HIDDEN_REASON]
        rows.rows_in, rows.rows_out = summary.input, summary.hashed

    with clock.stage("identical") as rows:
        members, sketches = group_identical(good)
        members, _ = cache.materialize(members)
        sketches, n_leaders = cache.materialize(sketches)
        summary.identical = summary.hashed - n_leaders
        rows.rows_in, rows.rows_out = summary.hashed, n_leaders

    near = NearDuplicates(
        sketches,
        n_leaders,
        PIPELINE,
        near_settings(config, n_leaders),
        cache=cache,
        clock=clock,
        counts=summary,
    )
    verified = near.find()
    pixels = F.col("width").cast("bigint") * F.col("height").cast("bigint")
    length = pixels if config.representative == "pixels" else F.lit(0)
    info = members.select(
        F.col(PATH).alias(DOC_ID), LEADER, length.alias("__length"), F.lit(None).alias("__order")
    )
    clustered = near.cluster(info, documents=summary.hashed)
    clusters = clustered.clusters.withColumnRenamed(DOC_ID, PATH)
    n_clustered = clustered.rows

    if n_clustered != summary.hashed or (
        summary.kept + summary.removed + summary.rejected != summary.input
    ):
        raise LostRecords(
            f"input {summary.input}: kept {summary.kept} + removed {summary.removed} + "
            f"rejected {summary.rejected} != input (clustered {n_clustered} of {summary.hashed})"
        )

    hashes = good.select(
        PATH,
        to_hex(F.col(FINGERPRINT)).alias("phash"),
        "width",
        "height",
        "format",
        "animated",
        "go_reference",
        "url",
        F.lit(PIPELINE.id).alias("pipeline"),  # stored values carry their pipeline id
    )
    return ImagesFound(
        clusters.select(PATH, CLUSTER_ID, IS_REPRESENTATIVE, DISTANCE),
        hashes,
        rejects,
        verified,
        good,
        near,
        clustered,
    )


def near_settings(config: ImagesConfig, images: int | None = None) -> NearSettings:
    """The shared stages' settings of an images config: pairs within ``k`` bits, the
    representative by ``__length`` (pixels, or 0 for ``min_id``), then the smallest path;
    candidate keys for ``images`` distinct pHashes (``ImagesConfig.hamming_scheme``)."""
    return NearSettings(
        max_distance=config.max_distance,
        threshold=0.0,
        verification="off",
        hot_bucket_size=config.hot_bucket_size,
        clustering=config.clustering,
        max_rounds=config.max_rounds,
        max_driver_edges=config.max_driver_edges,
        rule="longest",  # largest __length, then the smallest id
        floor=config.max_distance,
        scheme=config.hamming_scheme(images),
    )
