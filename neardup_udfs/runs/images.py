"""The images run: read (files or WARC records), pHash, identical hashes, the shared
near-duplicate stages (``runs.near``), outputs and the report.

Writes under the config's output: clusters/ (path, cluster_id, is_representative,
distance), hashes/ (path, phash hex, width, height, format, animated, go_reference, url,
pipeline), rejects/ (path, reason), pairs/ when asked, report.json, report.html (counts,
stage times, distances, sampled clusters as thumbnails) and, last, _MANIFEST.json.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from neardup_udfs.config import IMAGE_OUTPUTS, ImagesConfig
from neardup_udfs.io.input_files import HIDDEN_REASON, unread_files
from neardup_udfs.io.readers import InputError, open_uri, read_warc
from neardup_udfs.io.storage import HadoopStorage, Listed
from neardup_udfs.io.warc import WarcOptions, read_file
from neardup_udfs.kernels.phash import ANIMATED, GO_REFERENCE_FORMATS
from neardup_udfs.presets import resolve
from neardup_udfs.report import image_report_page, thumbnail_uri
from neardup_udfs.report.images import MEMBERS_SHOWN
from neardup_udfs.runs.near import Clusters, NearCounts, NearDuplicates, NearSettings
from neardup_udfs.runtime import (
    LostRecords,
    RunScope,
    StageClock,
    begin_output,
    cached_run,
    counts_of,
    input_stats,
    reason_counts,
    write_frames,
    write_report,
)
from neardup_udfs.schemas import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    LEADER,
    LOST_BYTES,
    REASON,
    TEXT,
)
from neardup_udfs.stages.fingerprint import to_hex
from neardup_udfs.stages.samples import sample_clusters, shown_samples
from neardup_udfs.stages.summaries import score_summary
from neardup_udfs.udfs import image_hash_udf

__all__ = [
    "EMPTY_FILE",
    "PIPELINE",
    "ImagesFound",
    "Summary",
    "cluster_images",
    "hash_images",
    "images_of_frame",
    "images_report",
    "near_settings",
    "read_images",
    "run",
    "shown_images",
]

log = logging.getLogger("neardup.images")

PATH = "path"
PIPELINE = resolve("phash")  # fingerprint's pHash; kind "simhash": a 64-bit Hamming value
EMPTY_FILE = "empty file (0 bytes)"  # files input: a file with no bytes holds no image
UNREAD_DDL = (
    "path string, url string, file string, content binary, read_error string, lost_bytes bigint"
)


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


def read_images(spark: SparkSession, config: ImagesConfig) -> DataFrame:
    """``path`` (the id: the file's URI, or the WARC-Record-ID), ``url`` (WARC), ``file``,
    ``content`` (null on a rejected row), ``read_error`` (why, or null) and ``lost_bytes``
    (WARC: bytes of the file no record could be read from).

    Every file under ``config.input`` is accounted for: besides the rows Spark reads (a
    file, or each record of a WARC file), each user file Spark passes over
    (``io.input_files``) is a row of its own, ``path`` its URI, ``file`` and ``content``
    null (it is never read): a name Spark skips has ``read_error`` :data:`HIDDEN_REASON`
    (a WARC file of that name too: its records are not counted); a 0-byte file of the
    ``files`` format, for which Spark yields no row, :data:`EMPTY_FILE` (a 0-byte WARC file
    holds no records)."""
    unread = unread_files(HadoopStorage(spark), config.input)
    hidden = _unread_rows(spark, unread.hidden, HIDDEN_REASON)
    if config.input_format == "warc":
        # files only under hidden names: no records, but not an empty input
        records = read_warc(
            spark, config.input, config.warc_options(), allow_empty=bool(unread.hidden)
        )
        read = records.select(
            F.col(DOC_ID).alias(PATH),
            "url",
            F.col("path").alias("file"),
            "content",
            "read_error",
            "lost_bytes",
        )
        return read.unionByName(hidden)
    try:
        listed = (
            spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(config.input)
        )
    except AnalysisException as e:
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            raise InputError(f"input path {config.input!r} does not exist") from None
        raise
    too_big = F.col("length") > config.max_bytes

    def rows(content: Column, error: Column) -> list[Column]:
        nothing = F.lit(None).cast("string")
        return [
            F.col(PATH),
            nothing.alias("url"),
            F.col(PATH).alias("file"),
            content.alias("content"),
            error.alias("read_error"),
            F.lit(0).cast("bigint").alias("lost_bytes"),
        ]

    # binaryFile tests length before it reads a file: the large ones are never loaded
    small = listed.where(~too_big).select(*rows(F.col("content"), F.lit(None).cast("string")))
    large = listed.where(too_big).select(
        *rows(F.lit(None).cast("binary"), F.lit(f"file larger than {config.max_bytes} bytes"))
    )
    empty = _unread_rows(spark, unread.empty, EMPTY_FILE)
    return small.unionByName(large).unionByName(hidden).unionByName(empty)


def _unread_rows(spark: SparkSession, files: tuple[Listed, ...], reason: str) -> DataFrame:
    """One rejected row of :func:`read_images`' columns per file of ``files``, named by its
    URI, ``reason`` its ``read_error``."""
    return spark.createDataFrame([(f.uri, None, None, None, reason, 0) for f in files], UNREAD_DDL)


def hash_images(images: DataFrame, config: ImagesConfig) -> DataFrame:
    """``read_images``' rows without ``content``, plus ``fingerprint`` (the pHash as
    bigint), ``width``, ``height``, ``format`` (``PNG``, ``WEBP``, ...), ``animated`` (the
    file has several frames: the first was hashed), ``go_reference`` (the reference decodes
    the format: PNG, JPEG, GIF) and ``reason`` (set = the row is a reject)."""
    h = image_hash_udf(config.max_pixels)(F.col("content"))
    label = F.col("__h.format")  # the kernel's label: "WEBP", "GIF (animated)", ...
    fmt = F.regexp_replace(label, re.escape(ANIMATED) + "$", "")
    hashed = images.withColumn("__h", h).select(
        PATH,
        "url",
        "file",
        "lost_bytes",
        F.col("__h.phash").alias(FINGERPRINT),
        F.col("__h.width").alias("width"),
        F.col("__h.height").alias("height"),
        fmt.alias("format"),
        label.endswith(ANIMATED).alias("animated"),
        fmt.isin(*GO_REFERENCE_FORMATS).alias("go_reference"),
        F.coalesce(F.col("read_error"), F.col("__h.error")).alias(REASON),
    )
    # an id read twice (a WARC record in two files): one copy goes on, the others are
    # rejects; ranked after hashing, so no image bytes are shuffled
    order = [F.col(REASON).asc_nulls_first(), F.col("file"), F.col(FINGERPRINT)]
    copy = F.row_number().over(Window.partitionBy(PATH).orderBy(*order))
    return (
        hashed.withColumn("__copy", copy)
        .withColumn(
            REASON, F.when(F.col("__copy") > 1, F.lit("duplicate path")).otherwise(F.col(REASON))
        )
        .drop("__copy")
    )


def run(spark: SparkSession, config: ImagesConfig) -> Summary:
    """Cluster the near-duplicate images of ``config.input`` into ``config.output``.

    Notes:
        Raises LostRecords (and writes no manifest) unless every input image is kept,
        removed as a near-duplicate of a kept one, or rejected.
    """
    return cached_run(
        spark,
        f"neardup images {config.input}",
        config.checkpoint_dir,
        lambda run: _run(spark, config, run),
        {"spark.sql.execution.arrow.maxRecordsPerBatch": str(config.batch_images)},
    )


def _run(spark: SparkSession, config: ImagesConfig, run: RunScope) -> Summary:
    clock = StageClock(log)
    summary = Summary(pipeline=PIPELINE.id, seconds=clock.seconds)
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    begin_output(
        store,
        config.output,
        run,
        job="images",
        names=IMAGE_OUTPUTS,
        inputs=[("input", config.input)],
    )

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
    """What report.json says of an images run (``runtime.report_of``'s keywords)."""
    near = found.near
    return dict(
        counts=counts_of(summary),
        seconds=summary.seconds,
        pipeline=(PIPELINE.id, PIPELINE.version),
        config=config,
        input=summary.input_stats,
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
        # images with the same pHash: one leader (smallest path) goes on, the rest join it
        same = F.min(PATH).over(Window.partitionBy(FINGERPRINT))
        members = good.select(PATH, FINGERPRINT, F.col("width"), F.col("height")).withColumn(
            LEADER, same
        )
        members, _ = cache.materialize(members)
        sketches = members.where(F.col(PATH) == F.col(LEADER)).select(
            F.col(PATH).alias(DOC_ID), FINGERPRINT
        )
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
    clustered = near.cluster(info)
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


def images_of_frame(df: DataFrame, path_col: str, content_col: str, max_bytes: int) -> DataFrame:
    """A DataFrame's images as :func:`read_images` gives a folder's: ``path`` (the id, as a
    string), ``url`` (null), ``file`` (null: the bytes are in the frame), ``content``, and
    ``read_error``: ``null path``, ``null content`` or ``content larger than N bytes``."""
    content = F.col(content_col)
    error = (
        F.when(F.col(path_col).isNull(), F.lit("null path"))
        .when(content.isNull(), F.lit("null content"))
        .when(F.length(content) > max_bytes, F.lit(f"content larger than {max_bytes} bytes"))
    )
    return df.select(
        F.col(path_col).cast("string").alias(PATH),
        F.lit(None).cast("string").alias("url"),
        F.lit(None).cast("string").alias("file"),
        F.when(error.isNull(), content).alias("content"),
        error.alias("read_error"),
        F.lit(0).cast("bigint").alias("lost_bytes"),
    )


def shown_images(clusters: DataFrame, images: DataFrame, config: ImagesConfig) -> DataFrame:
    """The rows report.html shows: the text report's sampled clusters
    (``stages.samples.sample_clusters``), of each its representative and its
    ``MEMBERS_SHOWN`` farthest members (``shown_samples``), with a ``thumbnail`` each.

    Args:
        clusters: the cluster stage's rows (``doc_id`` = the image's path).
        images: one row per hashed image: ``path`` and ``file`` (where its bytes are).

    Notes:
        At most 10 x (1 + MEMBERS_SHOWN) rows. Only their images are read again, on the
        executors (a WARC file holding several is read once, up to the last of them), and
        each becomes a data URI of a few kB; a thumbnail that cannot be made is null.
    """
    no_text = clusters.select(DOC_ID, F.lit("").alias(TEXT))  # images have none to show
    samples = sample_clusters(clusters, no_text).drop(TEXT, "truncated")
    picked = shown_samples(samples, MEMBERS_SHOWN)
    located = images.select(F.col(PATH).alias(DOC_ID), "file").join(F.broadcast(picked), DOC_ID)
    schema = StructType([*located.schema.fields, StructField("thumbnail", StringType())])
    made = located.repartition("file").mapInPandas(_thumbnailer(config), schema)
    return made.select(
        CLUSTER_ID,
        F.col(DOC_ID).alias(PATH),
        IS_REPRESENTATIVE,
        DISTANCE,
        CLUSTER_SIZE,
        "thumbnail",
    )


def _thumbnailer(
    config: ImagesConfig,
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    warc, options = config.input_format == "warc", config.warc_options()
    max_bytes, max_pixels = config.max_bytes, config.max_pixels

    def thumbnails(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        frames = list(batches)  # a few rows: all of them, so each file is read once
        if not frames:
            return
        rows = pd.concat(frames, ignore_index=True)
        made: dict[str, str | None] = {}
        for file, ids in rows.groupby("file")[DOC_ID]:
            try:
                for doc_id, data in _payloads(str(file), set(ids), warc, options, max_bytes):
                    made[doc_id] = thumbnail_uri(data, max_pixels=max_pixels)
            except Exception:  # noqa: BLE001 -- gone or unreadable since it was hashed
                log.warning("no thumbnails from %s", file, exc_info=True)
        rows["thumbnail"] = [made.get(d) for d in rows[DOC_ID]]
        yield rows

    return thumbnails


def _payloads(
    file: str, wanted: set[str], warc: bool, options: WarcOptions, max_bytes: int
) -> Iterator[tuple[str, bytes]]:
    """``(id, image bytes)`` of the ``wanted`` images of ``file``: the file itself, or the
    wanted records of a WARC file (read up to the last of them)."""
    fh, size = open_uri(file)
    with fh:
        if not warc:
            if size <= max_bytes:
                yield file, fh.read()
            return
        left = set(wanted)
        for row in read_file(fh, file, size, options):
            if row[DOC_ID] in left and row["content"] is not None:
                left.discard(row[DOC_ID])
                yield row[DOC_ID], row["content"]
                if not left:
                    return


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
