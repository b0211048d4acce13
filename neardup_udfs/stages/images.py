"""The images run's own stages: images read from files, WARC records or a caller's frame,
every file accounted for; their pHash, with rejects and ids read twice marked; identical hashes
grouped; the rows report.html shows, with thumbnails."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from neardup_udfs.io.input_files import HIDDEN_REASON, unread_files
from neardup_udfs.io.readers import InputError, open_uri, read_warc, require_input
from neardup_udfs.io.storage import HadoopStorage, Listed
from neardup_udfs.io.warc import WarcOptions, read_file
from neardup_udfs.kernels.phash import ANIMATED, GO_REFERENCE_FORMATS
from neardup_udfs.report import thumbnail_uri
from neardup_udfs.report.images import MEMBERS_SHOWN
from neardup_udfs.schemas import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    DISTANCE,
    DOC_ID,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    LEADER,
    REASON,
    TEXT,
)
from neardup_udfs.stages.samples import sample_clusters, shown_samples
from neardup_udfs.udfs import image_hash_udf

if TYPE_CHECKING:  # a stage takes a validated config; it imports no config code
    from neardup_udfs.config import ImagesConfig

__all__ = [
    "EMPTY_FILE",
    "PATH",
    "group_identical",
    "hash_images",
    "images_of_frame",
    "read_images",
    "shown_images",
]

log = logging.getLogger("neardup.images")

PATH = "path"
EMPTY_FILE = "empty file (0 bytes)"  # files input: a file with no bytes holds no image
UNREAD_DDL = (
    "path string, url string, file string, content binary, read_error string, lost_bytes bigint"
)


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
    store = HadoopStorage(spark)
    require_input(store, config.input)
    unread = unread_files(store, config.input)
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


def group_identical(good: DataFrame) -> tuple[DataFrame, DataFrame]:
    """Images with the same pHash grouped: ``members`` (``path``, ``fingerprint``, ``width``,
    ``height``, ``leader``: the group's smallest path, one row per image of ``good``) and
    ``sketches`` (``doc_id``, ``fingerprint``: one row per group, its leader), which alone
    go on to the near-duplicate stages."""
    same = F.min(PATH).over(Window.partitionBy(FINGERPRINT))
    members = good.select(PATH, FINGERPRINT, F.col("width"), F.col("height")).withColumn(
        LEADER, same
    )
    sketches = members.where(F.col(PATH) == F.col(LEADER)).select(
        F.col(PATH).alias(DOC_ID), FINGERPRINT
    )
    return members, sketches


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
