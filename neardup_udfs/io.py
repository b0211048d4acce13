"""Readers and writers shared by the jobs."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Iterator
from typing import IO

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from neardup_udfs.schemas import DOC_ID, TEXT
from neardup_udfs.warc import WarcOptions, record_batches

__all__ = [
    "INPUT_FORMATS",
    "MANIFEST_NAME",
    "WARC_RECORD_ID",
    "InputError",
    "open_uri",
    "read_documents",
    "read_input",
    "read_warc",
]

INPUT_FORMATS = ("text", "jsonl", "parquet", "warc", "wet")
WARC_RECORD_ID = "warc_record_id"  # warc/wet with --id-col: the record's own id
MANIFEST_NAME = "_MANIFEST.json"  # the success marker every job writes last
WARC_FORMATS = ("warc", "wet")


class InputError(ValueError):
    """The input cannot be read as asked; the message names the path, format or column."""


def read_documents(
    spark: SparkSession, path: str, fmt: str, id_col: str | None, text_col: str
) -> DataFrame:
    """Documents as a DataFrame of ``doc_id`` (string) and ``text`` (string or binary).

    Notes:
        ``text``: every file under ``path`` (recursively) is one document, read as raw bytes,
        its id the file's URI. ``jsonl`` / ``parquet``: ``id_col`` and ``text_col`` name the
        columns (``id_col`` is required: ids must be stable across runs). Other columns are
        dropped here.
    """
    if fmt == "text":
        df = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(path)
            .select(F.col("path").alias(DOC_ID), F.col("content").alias(TEXT))
        )
        return df
    if fmt not in INPUT_FORMATS:
        raise InputError(f"input format {fmt!r} is not one of {', '.join(INPUT_FORMATS)}")
    if not id_col:
        raise InputError(f"--id-col is required for input format {fmt!r}")
    df = spark.read.json(path) if fmt == "jsonl" else spark.read.parquet(path)
    missing = [c for c in (id_col, text_col) if c not in df.columns]
    if missing:
        raise InputError(
            f"input {path!r} has no column {missing[0]!r} (columns: {', '.join(df.columns)})"
        )
    return df.select(F.col(id_col).cast("string").alias(DOC_ID), F.col(text_col).alias(TEXT))


def read_input(
    spark: SparkSession,
    path: str,
    fmt: str,
    id_col: str | None,
    text_col: str,
    warc: WarcOptions | None = None,
) -> tuple[DataFrame, str]:
    """The input with all its columns, plus ``doc_id`` (string); and the name of its text column.

    Notes:
        ``text``: every file under ``path`` (recursively) is one document: Spark's
        ``binaryFile`` columns (``path``, ``modificationTime``, ``length``, ``content``), the
        text being ``content`` and the id the file's URI. ``jsonl`` / ``parquet``: the id is
        ``id_col`` when given, else ``<file URI>:<record index>`` (0-based, in file order) --
        stable across runs and partitionings, never ``monotonically_increasing_id``.
        ``warc`` / ``wet``: see :func:`read_warc` (``id_col`` may name one of its columns,
        e.g. ``url``, and the WARC-Record-ID is kept as ``warc_record_id``; ``text_col``
        does not apply).
    """
    if fmt not in INPUT_FORMATS:
        raise InputError(f"input format {fmt!r} is not one of {', '.join(INPUT_FORMATS)}")
    if fmt in WARC_FORMATS:
        df = read_warc(spark, path, warc or WarcOptions())
        if id_col and id_col != DOC_ID:
            if id_col not in df.columns:
                raise InputError(
                    f"--id-col {id_col!r} is not a column of WARC input "
                    f"(columns: {', '.join(df.columns)})"
                )
            # the record's own id stays with it (docs/ and clusters/ carry it)
            df = df.withColumn(WARC_RECORD_ID, F.col(DOC_ID)).withColumn(DOC_ID, F.col(id_col))
        return df, TEXT
    try:
        if fmt == "text":
            df = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path)
            return df.withColumn(DOC_ID, F.col("path")), "content"
        df = spark.read.json(path) if fmt == "jsonl" else spark.read.parquet(path)
    except AnalysisException as e:
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            raise InputError(f"input path {path!r} does not exist") from None
        raise
    for col in (id_col, text_col):
        if col and col not in df.columns:
            raise InputError(
                f"input {path!r} has no column {col!r} (columns: {', '.join(df.columns)})"
            )
    if DOC_ID in df.columns and id_col != DOC_ID:
        raise InputError(f"input column {DOC_ID!r} is reserved: pass --id-col {DOC_ID}")
    if id_col:
        return df.withColumn(DOC_ID, F.col(id_col).cast("string")), text_col
    order = Window.partitionBy("__file").orderBy("__start", "__seq")
    with_id = (
        df.withColumn("__file", F.col("_metadata.file_path"))
        .withColumn("__start", F.col("_metadata.file_block_start"))
        .withColumn("__seq", F.monotonically_increasing_id())  # order within a split only
        .withColumn(
            DOC_ID,
            F.concat(F.col("__file"), F.lit(":"), (F.row_number().over(order) - 1).cast("string")),
        )
        .drop("__file", "__start", "__seq")
    )
    return with_id, text_col


def read_warc(spark: SparkSession, path: str, options: WarcOptions) -> DataFrame:
    """Every record of the WARC/WET files at ``path`` (a file, a directory read recursively,
    or a glob) as one row (``warc.COLUMNS``); rows with ``read_error`` set are not documents.

    Notes:
        The driver only lists the files; each is read as a stream by one task on an
        executor (``local``, ``hdfs://``, ``s3://`` / ``s3a://`` and any filesystem pyarrow
        knows), ``rows`` at a time, so a file's size does not bound memory.
    """
    try:
        files = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(path)
            .select("path", "length")  # the content column is never read
        )
        n_files = files.count()
    except AnalysisException as e:
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            raise InputError(f"input path {path!r} does not exist") from None
        raise
    if n_files == 0:
        raise InputError(f"input path {path!r} holds no files")

    def read(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for pdf in batches:
            listed = zip(pdf["path"].tolist(), pdf["length"].tolist(), strict=True)
            yield from record_batches(listed, open_uri, options)

    one_file_per_task = files.repartitionByRange(min(n_files, 100_000), "path")
    return one_file_per_task.mapInPandas(read, options.schema_ddl)


def open_uri(uri: str) -> tuple[IO[bytes], int]:
    """A seekable binary stream over the file at a Spark path URI, and its size in bytes."""
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme in ("", "file"):
        local = urllib.parse.unquote(parsed.path)
        return open(local, "rb"), os.path.getsize(local)
    from pyarrow import fs

    target = "s3" + uri[len("s3a") :] if parsed.scheme in ("s3a", "s3n") else uri
    filesystem, inner = fs.FileSystem.from_uri(target)
    stream = filesystem.open_input_file(inner)
    return stream, stream.size()
