"""Readers and writers shared by the jobs."""

from __future__ import annotations

import gzip
import os
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import IO

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType, VariantType

from neardup_udfs.io.storage import Listed
from neardup_udfs.io.warc import WarcOptions, record_batches
from neardup_udfs.schemas import (
    CORRUPT_RECORD,
    DOC_ID,
    READ_ERROR,
    REASON,
    REJECTS_DDL,
    SOURCE_FILE,
    TEXT,
)

__all__ = [
    "INPUT_FORMATS",
    "MALFORMED_JSON",
    "MANIFEST_NAME",
    "NOT_A_STRING",
    "WARC_RECORD_ID",
    "EmptyInput",
    "InputError",
    "malformed_lines",
    "open_uri",
    "read_documents",
    "read_input",
    "read_warc",
    "with_empty_files",
]

INPUT_FORMATS = ("text", "jsonl", "parquet", "warc", "wet")
WARC_RECORD_ID = "warc_record_id"  # warc/wet with --id-col: the record's own id
MANIFEST_NAME = "_MANIFEST.json"  # the success marker every job writes last
WARC_FORMATS = ("warc", "wet")
MALFORMED_JSON = "malformed JSON"  # a JSON-lines line that does not parse as a JSON object
NOT_A_STRING = "text is not a string"  # a JSON-lines text value that is a number, list, ...


class InputError(ValueError):
    """The input cannot be read as asked; the message names the path, format or column."""


class EmptyInput(InputError):
    """The input holds no records (no files, or only empty ones) and an empty input was not
    allowed."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"input path {path!r} holds no records (no files, or only empty ones); pass "
            "--allow-empty-input (allow_empty_input = true) to make that an empty run"
        )


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
    *,
    allow_empty: bool = False,
) -> tuple[DataFrame, str]:
    """The input with all its columns, plus ``doc_id`` (string); and the name of its text column.

    Notes:
        ``text``: every file under ``path`` (recursively) is one document: Spark's
        ``binaryFile`` columns (``path``, ``modificationTime``, ``length``, ``content``), the
        text being ``content`` and the id the file's URI. ``jsonl`` / ``parquet``: the id is
        ``id_col`` when given, else ``<file URI>:<record index>`` (0-based, in file order) --
        stable across runs and partitionings, never ``monotonically_increasing_id``.
        ``jsonl``: a line that is not a JSON object, or whose text value is not a JSON string
        (a number, a list, an object), has ``read_error`` set (:data:`MALFORMED_JSON`,
        :data:`NOT_A_STRING`); such a value is never turned into text. The frame then also
        carries Spark's raw line and its file (``CORRUPT_RECORD``, ``SOURCE_FILE``), for
        :func:`malformed_lines`.
        ``warc`` / ``wet``: see :func:`read_warc` (``id_col`` may name one of its columns,
        e.g. ``url``, and the WARC-Record-ID is kept as ``warc_record_id``; ``text_col``
        does not apply).
        An input with no files, or no records in its JSON lines or Parquet files, raises
        :class:`EmptyInput` unless ``allow_empty``, which gives an empty frame of the same
        columns.
    """
    if fmt not in INPUT_FORMATS:
        raise InputError(f"input format {fmt!r} is not one of {', '.join(INPUT_FORMATS)}")
    if fmt in WARC_FORMATS:
        records = read_warc(spark, path, warc or WarcOptions(), allow_empty=allow_empty)
        if id_col and id_col != DOC_ID:
            if id_col not in records.columns:
                raise InputError(
                    f"--id-col {id_col!r} is not a column of WARC input "
                    f"(columns: {', '.join(records.columns)})"
                )
            # the record's own id stays with it (docs/ and clusters/ carry it)
            records = records.withColumn(WARC_RECORD_ID, F.col(DOC_ID))
            records = records.withColumn(DOC_ID, F.col(id_col))
        return records, TEXT
    df: DataFrame | None
    try:
        if fmt == "text":
            df = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path)
            return df.withColumn(DOC_ID, F.col("path")), "content"
        df = spark.read.json(path) if fmt == "jsonl" else spark.read.parquet(path)
    except AnalysisException as e:
        if "PATH_NOT_FOUND" in str(e) or "does not exist" in str(e):
            raise InputError(f"input path {path!r} does not exist") from None
        if "UNABLE_TO_INFER_SCHEMA" not in str(e):
            raise
        df = None
    if df is None or not df.columns:  # no files, or files with no records
        if not allow_empty:
            raise EmptyInput(path)
        names = dict.fromkeys(c for c in (id_col, text_col, DOC_ID) if c)
        schema = StructType([StructField(c, StringType()) for c in names])
        return spark.createDataFrame([], schema), text_col
    if fmt == "jsonl":
        df = _json_checked(spark, path, df, text_col)
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


def _json_checked(spark: SparkSession, path: str, inferred: DataFrame, text_col: str) -> DataFrame:
    """JSON lines as Spark infers them, except that a text value that is not a JSON string
    stays out of the text column and its row, like a line that is not JSON at all, has
    ``read_error`` set (with the raw line and its file kept for :func:`malformed_lines`)."""
    fields = inferred.schema.fields
    malformed = CORRUPT_RECORD in inferred.columns
    as_string = any(f.name == text_col and f.dataType == StringType() for f in fields)
    if not as_string and not malformed:
        return inferred  # no text column, or one of another type: split_rejects says so
    df = inferred
    error = F.lit(None).cast("string")
    if as_string:  # Spark turns 42 or ["a"] into the text "42" / '["a"]': read the JSON value
        variant = [
            StructField(f.name, VariantType(), True) if f.name == text_col else f for f in fields
        ]
        value = F.col(text_col)
        df = (
            spark.read.schema(StructType(variant))
            .json(path)
            .withColumn("__kind", F.schema_of_variant(value))
        )
        kind = F.col("__kind")
        error = F.when(kind.isNotNull() & ~kind.isin("STRING", "VOID"), F.lit(NOT_A_STRING))
        text = F.when(kind == "STRING", F.variant_get(value, "$", "string"))
        df = df.withColumn(READ_ERROR, error).withColumn(text_col, text).drop("__kind")
        error = F.col(READ_ERROR)
    if malformed:
        error = F.when(F.col(CORRUPT_RECORD).isNotNull(), F.lit(MALFORMED_JSON)).otherwise(error)
        df = df.withColumn(SOURCE_FILE, F.col("_metadata.file_path"))
    return df.withColumn(READ_ERROR, error)


def malformed_lines(tagged: DataFrame) -> DataFrame:
    """One reject row (``doc_id``, ``reason``) per :data:`MALFORMED_JSON` row of ``tagged``
    (a frame of :func:`read_input` with ``reason``): ``doc_id`` is ``<file URI>#L<line>``,
    the line counted from 1 over every line of the file, blank ones included (a line that
    cannot be found again, e.g. in a file compressed other than by gzip, gets
    ``<file URI>#L?<n>``)."""
    corrupt = tagged.where(F.col(REASON) == MALFORMED_JSON).select(
        F.col(SOURCE_FILE).alias("file"), F.col(CORRUPT_RECORD).alias("record")
    )
    return corrupt.groupBy("file").applyInPandas(_locate, REJECTS_DDL)


def _locate(pdf: pd.DataFrame) -> pd.DataFrame:
    """The lines of one file holding its malformed records (see :func:`malformed_lines`)."""
    uri = str(pdf["file"].iloc[0])
    pending: dict[str, int] = {}
    for record in pdf["record"].tolist():
        key = str(record).strip()
        pending[key] = pending.get(key, 0) + 1
    left, found = len(pdf), []
    stream, _ = open_uri(uri)
    with stream:
        lines: Iterable[bytes] = gzip.GzipFile(fileobj=stream) if uri.endswith(".gz") else stream
        try:
            for number, raw in enumerate(lines, start=1):
                key = raw.decode("utf-8", errors="replace").strip()
                if pending.get(key):
                    pending[key] -= 1
                    found.append(f"{uri}#L{number}")
                    left -= 1
                    if not left:
                        break
        except (OSError, EOFError):  # a broken compressed stream: the rest stay unlocated
            pass
    found += [f"{uri}#L?{n}" for n in range(1, left + 1)]
    return pd.DataFrame({DOC_ID: found, REASON: MALFORMED_JSON})


def with_empty_files(spark: SparkSession, df: DataFrame, files: Iterable[Listed]) -> DataFrame:
    """``df`` (``text`` input, as :func:`read_input` gives it) with a row of empty content for
    each of ``files`` (0-byte files, for which Spark's binary reader yields no row)."""
    rows = [(f.uri, f.modified, f.length, b"", f.uri) for f in files]
    if not rows:
        return df
    extra = spark.createDataFrame(
        rows, "path string, ms bigint, length bigint, content binary, id string"
    )
    extra = extra.select(
        "path",
        F.timestamp_millis("ms").alias("modificationTime"),
        "length",
        "content",
        F.col("id").alias(DOC_ID),
    )
    return df.unionByName(extra)


def read_warc(
    spark: SparkSession, path: str, options: WarcOptions, *, allow_empty: bool = False
) -> DataFrame:
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
        if not allow_empty:
            raise EmptyInput(path)
        return spark.createDataFrame([], options.schema_ddl)

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
