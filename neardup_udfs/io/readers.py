"""Readers and writers shared by the jobs."""

from __future__ import annotations

import codecs
import gzip
import logging
import os
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import IO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from neardup_udfs.io.input_files import INPUT_FORMATS, unread_files
from neardup_udfs.io.reasons import (
    GZIP_CORRUPT,
    GZIP_TRUNCATED,
    LINE_REASONS,
    MALFORMED_JSON,
    NOT_A_STRING,
    NOT_UNICODE,
    NOT_UTF8,
    NOT_UTF16,
    NOT_UTF32,
    EmptyInput,
    InputError,
)
from neardup_udfs.io.storage import HadoopStorage, Listed, escape_glob
from neardup_udfs.io.warc import WarcOptions, record_batches
from neardup_udfs.schemas import (
    CORRUPT_RECORD,
    DOC_ID,
    READ_ERROR,
    REASON,
    REJECTS_DDL,
    SOURCE_FILE,
    SOURCE_LINE,
    TEXT,
)

__all__ = [
    "GZIP_CORRUPT",
    "GZIP_TRUNCATED",
    "INPUT_FORMATS",
    "LINE_REASONS",
    "MALFORMED_JSON",
    "NOT_A_STRING",
    "NOT_UNICODE",
    "NOT_UTF8",
    "NOT_UTF16",
    "NOT_UTF32",
    "WARC_RECORD_ID",
    "EmptyInput",
    "InputError",
    "malformed_lines",
    "open_uri",
    "read_input",
    "read_warc",
    "require_input",
    "with_empty_files",
]

_log = logging.getLogger("neardup.readers")

WARC_RECORD_ID = "warc_record_id"  # warc/wet with --id-col: the record's own id
WARC_FORMATS = ("warc", "wet")
def require_input(store: HadoopStorage, path: str) -> None:
    """:class:`InputError` when input ``path`` names nothing (a glob: matches nothing).
    Checked before Spark's reader is asked: its failed listing is a WARN with a Java stack
    of some 90 frames (``FileStreamSink``, under Spark's default log4j profile) beside
    the job's own line."""
    if not store.matches(path):
        raise InputError(f"input path {path!r} does not exist")


def read_input(
    spark: SparkSession,
    path: str,
    fmt: str,
    id_col: str | None,
    text_col: str,
    warc: WarcOptions | None = None,
    *,
    allow_empty: bool = False,
    files: Sequence[Listed] | None = None,
) -> tuple[DataFrame, str]:
    """The input with all its columns, plus ``doc_id`` (string); and the name of its text column.

    Notes:
        ``path``: a file, a directory read recursively, or a glob; a path that exists as
        written is read literally even when it holds glob characters (a folder ``run[1]``).
        ``files``: the files under it that Spark reads (``input_files.Unread.read``), when
        the caller has listed them; else they are listed here (JSON lines and Parquet).
        ``text``: every file under ``path`` (recursively) is one document: Spark's
        ``binaryFile`` columns (``path``, ``modificationTime``, ``length``, ``content``), the
        text being ``content`` and the id the file's URI. ``jsonl`` / ``parquet``: the id is
        ``id_col`` when given, else ``<file URI>:<record index>`` (0-based, in file order) --
        stable across runs and partitionings, never ``monotonically_increasing_id``.
        ``jsonl``: a line that is not a JSON object, or whose text value is not a JSON string
        (a number, a list, an object), has ``read_error`` set (:data:`MALFORMED_JSON`,
        :data:`NOT_A_STRING`; a line that is not text in its encoding: :data:`NOT_UTF8`);
        such a value is never turned into text. The frame then also carries Spark's raw line
        and its file (``CORRUPT_RECORD``, ``SOURCE_FILE``), for :func:`malformed_lines`.
        A UTF-16 or UTF-32 file (a byte order mark, or the zero bytes of its first
        characters) is decoded, and a ``.gz`` file whose stream breaks off or is corrupt is
        read up to the break, by neardup's own line reader (see :func:`_json_source`); their
        rows carry ``SOURCE_FILE`` and ``SOURCE_LINE``, and the unreadable rest of a broken
        file is one row with ``read_error`` :data:`GZIP_TRUNCATED` (or
        :data:`GZIP_CORRUPT`).
        ``parquet``: every Parquet file must give each column one type; else
        :class:`InputError` naming the column and two files that disagree, before anything
        is read (see :func:`_check_parquet_types`).
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
    store = HadoopStorage(spark)
    require_input(store, path)
    pattern = store.pattern(path)  # a path that exists as written is read literally
    df: DataFrame | None
    try:
        if fmt == "text":
            df = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(pattern)
            return df.withColumn(DOC_ID, F.col("path")), "content"
        if fmt == "parquet":
            listed = files if files is not None else unread_files(store, path, parquet=True).read
            _check_parquet_types(listed)
            df = spark.read.parquet(pattern)
        else:
            listed = files if files is not None else unread_files(store, path).read
            source = _json_source(spark, store, path, pattern, listed)
            schema = source.schema(id_col, text_col)
            df = None if schema is None else _json_checked(source, schema, text_col)
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
    for col in (id_col, text_col):
        if col and col not in df.columns:
            raise InputError(
                f"input {path!r} has no column {col!r} (columns: {', '.join(df.columns)})"
            )
    if DOC_ID in df.columns and id_col != DOC_ID:
        raise InputError(f"input column {DOC_ID!r} is reserved: pass --id-col {DOC_ID}")
    if id_col:
        return df.withColumn(DOC_ID, F.col(id_col).cast("string")).drop(_START, _SEQ), text_col
    if _SEQ in df.columns:  # rows of several sources: each says where it comes from
        file, start, seq = F.col(SOURCE_FILE), F.col(_START), F.col(_SEQ)
    else:
        file, start = F.col("_metadata.file_path"), F.col("_metadata.file_block_start")
        seq = F.monotonically_increasing_id()  # order within a split only
    order = Window.partitionBy("__file").orderBy("__start", "__seq")
    with_id = (
        df.withColumn("__file", file)
        .withColumn("__start", start)
        .withColumn("__seq", seq)
        .withColumn(
            DOC_ID,
            F.concat(F.col("__file"), F.lit(":"), (F.row_number().over(order) - 1).cast("string")),
        )
        .drop("__file", "__start", "__seq", _START, _SEQ)
    )
    return with_id, text_col


# --- Parquet: one type per column ----------------------------------------------------------


def _check_parquet_types(files: Sequence[Listed]) -> None:
    """Raises :class:`InputError` when two of ``files`` (the Parquet files Spark reads) give
    a column different types, as Spark would read them (``string`` / ``bigint`` /
    ``binary`` ...; a nested column by its kind only: ``struct``, ``array``, ``map``), naming
    the column and one file of each of two types; or when a file is not Parquet.

    Notes:
        Spark reads every file of an input with one file's schema, so such an input fails
        mid-run (``PARQUET_COLUMN_DATA_TYPE_MISMATCH``) or not, depending on which file it
        picked. Only the footers are read, on the driver, 16 at a time; 0-byte files (Spark
        skips them) and files pyarrow cannot open (a filesystem only Hadoop knows) are left
        to Spark.
    """
    targets = [f for f in files if f.length > 0]
    if len(targets) < 2:
        return
    with ThreadPoolExecutor(max_workers=min(16, len(targets))) as pool:
        found = list(pool.map(_footer_types, [f.uri for f in targets]))
    seen: dict[str, dict[str, str]] = {}  # column -> its type -> the first file with it
    for f, types in zip(targets, found, strict=True):
        for column, dtype in (types or {}).items():
            seen.setdefault(column, {}).setdefault(dtype, f.uri)
    for column, by_type in seen.items():
        if len(by_type) > 1:
            (t1, f1), (t2, f2) = list(by_type.items())[:2]
            more = f" (and {len(by_type) - 2} more types)" if len(by_type) > 2 else ""
            raise InputError(
                f"input column {column!r} has different types in different Parquet files: "
                f"{t1} in {f1!r}, {t2} in {f2!r}{more}; Spark reads every file with one "
                "schema: rewrite the files with one type, or read them as separate inputs"
            )


def _footer_types(uri: str) -> dict[str, str] | None:
    """The Spark type of each top-level column of the Parquet file at ``uri``, from its
    footer; None when pyarrow cannot open the file's filesystem."""
    import pyarrow.parquet as pq

    try:
        stream, _ = _open_listed(uri)
    except Exception:  # a scheme only Hadoop knows: Spark reads it as it is
        return None
    with stream:
        try:
            schema = pq.read_metadata(stream).schema.to_arrow_schema()
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"input file {uri!r} is not a readable Parquet file ({e})") from None
    return {field.name: _spark_type(field.type) for field in schema}


def _spark_type(arrow: pa.DataType) -> str:
    """The type Spark reads a Parquet column of this (footer) type as; nested ones by kind."""
    from pyspark.sql.pandas.types import from_arrow_type

    try:
        spark_type: DataType = from_arrow_type(arrow)
    except Exception:  # a type Spark's Arrow conversion lacks (unsigned ints): pyarrow's name
        return str(arrow)
    if isinstance(spark_type, StructType | ArrayType | MapType):
        return spark_type.typeName()
    return spark_type.simpleString()


# --- JSON lines ----------------------------------------------------------------------------

_START, _SEQ, _PROBLEM = "__start", "__seq", "__problem"  # where a row comes from; its error
_LINES_DDL = "file string, line bigint, value string, problem string"
_CHUNK = 1 << 22  # bytes read (or decompressed) at a time by the Python line reader
_UNITS = {"utf-8": ("u1", NOT_UTF8), "utf-16-le": ("<u2", NOT_UTF16),
          "utf-16-be": (">u2", NOT_UTF16), "utf-32-le": ("<u4", NOT_UTF32),
          "utf-32-be": (">u4", NOT_UTF32)}  # fmt: skip
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))  # fmt: skip


class _JsonSource:
    """Where the rows of JSON-lines input come from: Spark's JSON reader over the files it
    can read as they are (``plain``: all of ``pattern`` when ``lines`` is None), and the
    lines neardup's own reader took from the others (``lines``, :data:`_LINES_DDL`)."""

    def __init__(
        self,
        spark: SparkSession,
        pattern: str,
        plain: list[str] | None = None,
        lines: DataFrame | None = None,
        base: str | None = None,
    ) -> None:
        self.spark, self.pattern, self.plain, self.lines, self.base = (
            spark, pattern, plain, lines, base)  # fmt: skip

    def schema(self, id_col: str | None, text_col: str) -> StructType | None:
        """The schema Spark infers over every line; None when there is no record.
        AnalysisException when the path does not exist."""
        if self.lines is None:
            inferred = self.spark.read.json(self.pattern).schema
            return inferred if inferred.fields else None
        texts = [self.lines.where(F.col("value").isNotNull()).select("value")]
        if self.plain:
            texts.append(self.spark.read.text(self.plain).select("value"))
        schema = self.spark.read.json(reduce(DataFrame.unionByName, texts)).schema
        if not schema.fields:  # only what could not be read: rows without fields
            schema = StructType([StructField(c, StringType()) for c in (id_col, text_col) if c])
        if CORRUPT_RECORD not in schema.fieldNames():  # the two readers may disagree on a line
            schema = schema.add(CORRUPT_RECORD, StringType())
        return schema

    def read(self, schema: StructType) -> DataFrame:
        """Every record, with ``schema``'s columns (and partition columns). Rows of several
        sources also carry ``SOURCE_FILE``, ``SOURCE_LINE`` (neardup's reader only), their
        order in the file (``_START``, ``_SEQ``) and the reader's own error (``_PROBLEM``)."""
        if self.lines is None:
            return self.spark.read.schema(schema).json(self.pattern)
        parts, partitions = [], []
        if self.plain:
            reader = self.spark.read.schema(schema)
            if self.base:
                reader = reader.option("basePath", self.base)
            plain = reader.json(self.plain)
            partitions = [f for f in plain.schema.fields if f.name not in schema.fieldNames()]
            parts.append(
                plain.select(
                    "*",
                    F.col("_metadata.file_path").alias(SOURCE_FILE),
                    F.lit(None).cast("bigint").alias(SOURCE_LINE),
                    F.col("_metadata.file_block_start").alias(_START),
                    F.monotonically_increasing_id().alias(_SEQ),  # order within a split
                    F.lit(None).cast("string").alias(_PROBLEM),
                )
            )
        options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_RECORD}
        decoded = self.lines.select(
            F.from_json("value", schema, options).alias("__json"),
            F.col("file").alias(SOURCE_FILE),
            F.col("line").alias(SOURCE_LINE),
            F.lit(0).cast("bigint").alias(_START),
            F.col("line").alias(_SEQ),
            F.col("problem").alias(_PROBLEM),
        ).select("__json.*", SOURCE_FILE, SOURCE_LINE, _START, _SEQ, _PROBLEM)
        for field in partitions:  # a folder name=value above the file, as Spark reads it
            decoded = decoded.withColumn(field.name, _partition_value(field))
        parts.append(decoded)
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), parts)


def _partition_value(field: StructField) -> Column:
    """The value of partition column ``field`` in the path of a row's file (null if none)."""
    raw = F.regexp_extract(F.col(SOURCE_FILE), f"/\\Q{field.name}=\\E([^/]*)/", 1)
    value = F.try_url_decode(F.try_url_decode(raw))  # the URI's escapes, then Spark's own
    missing = (raw == "") | (value == "__HIVE_DEFAULT_PARTITION__")
    return F.when(~missing, value).try_cast(field.dataType)


def _json_source(
    spark: SparkSession, store: HadoopStorage, path: str, pattern: str, files: Sequence[Listed]
) -> _JsonSource:
    """The sources of JSON-lines input ``path`` (``files``: the files Spark reads).

    Notes:
        One Spark job checks every file on the executors (:func:`_inspect`): the first bytes
        of each (decompressed for ``.gz``) for a UTF-16 / UTF-32 byte order mark or the zero
        bytes of UTF-16 / UTF-32 text, and every ``.gz`` stream to its end (a decompression
        pass, no parsing). Spark's reader takes the rest as before; those files are read by
        :func:`_file_lines` (decoded, and a broken stream up to its break), one task each,
        and their lines parsed by Spark (``from_json``) with the schema inferred over all.
    """
    special = _special_files(spark, files)
    if not special:
        return _JsonSource(spark, pattern)
    for f, encoding, damage, at in special:
        if damage:
            _log.warning(
                "input file %s: %s gzip stream after %d decompressed bytes; the lines before "
                "the break are read, the rest is one reject", f.uri, damage, at)  # fmt: skip
        elif encoding:
            _log.info("input file %s: %s, decoded by neardup's line reader", f.uri, encoding)
    jvm_path = spark.sparkContext._jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
    rows = [(str(jvm_path(f.uri).toUri().toString()), f.uri, enc) for f, enc, _, _ in special]
    names = {f.uri for f, _, _, _ in special}
    plain = [escape_glob(f.uri) for f in files if f.uri not in names and f.length > 0]
    base = path if store.kind(path) == "dir" else None
    one_per_task = spark.sparkContext.parallelize(rows, min(len(rows), 100_000))
    table = spark.createDataFrame(one_per_task, "file string, path string, encoding string")
    return _JsonSource(spark, pattern, plain, table.mapInArrow(_line_batches, _LINES_DDL), base)


# at most this many uncompressed files have their first bytes checked by the driver itself
# (a .gz file is decompressed whole to find damage: always in a Spark job)
DRIVER_HEAD_CHECKS = 1024


def _special_files(
    spark: SparkSession, files: Sequence[Listed]
) -> list[tuple[Listed, str | None, str | None, int]]:
    """The files of ``files`` Spark's JSON reader cannot read as they are: each with its
    encoding (None: UTF-8), its damage (None, ``"truncated"`` or ``"corrupt"``) and the
    decompressed bytes before the damage; at most one Spark job (see :func:`_json_source`:
    up to ``DRIVER_HEAD_CHECKS`` uncompressed files are checked by the driver)."""
    targets = sorted((f for f in files if f.length > 0), key=lambda f: (-_weight(f), f.uri))
    found: list[tuple[str, str | None, str | None, int]] = []
    plain = [f.uri for f in targets if not f.uri.endswith(".gz")]
    if len(plain) <= DRIVER_HEAD_CHECKS:  # 8 bytes of each: cheaper here than in a Spark job
        found = _inspect_all(plain)
        targets = [f for f in targets if f.uri.endswith(".gz")]
    if targets:
        found += _inspected_by_tasks(spark, targets)
    by_uri = {uri: (encoding, damage, at) for uri, encoding, damage, at in found}
    return [(f, *by_uri[f.uri]) for f in sorted(files, key=lambda f: f.uri) if f.uri in by_uri]


def _inspected_by_tasks(
    spark: SparkSession, targets: Sequence[Listed]
) -> list[tuple[str, str | None, str | None, int]]:
    """:func:`_inspect_all` of ``targets`` (heaviest first) in one Spark job of even tasks."""
    k = min(len(targets), 2 * max(1, spark.sparkContext.defaultParallelism))
    loads = [0] * k
    buckets: list[list[str]] = [[] for _ in range(k)]
    for f in targets:  # the heaviest file first, to the lightest task: even tasks
        task = loads.index(min(loads))
        loads[task] += _weight(f)
        buckets[task].append(f.uri)
    return spark.sparkContext.parallelize(buckets, k).flatMap(_inspect_all).collect()


def _weight(f: Listed) -> int:
    """What checking ``f`` costs, about: a .gz file is decompressed, others only opened."""
    return f.length if f.uri.endswith(".gz") else 1 << 16


def _inspect_all(uris: list[str]) -> list[tuple[str, str | None, str | None, int]]:
    """:func:`_inspect` of each of ``uris``, for those Spark's JSON reader cannot read as
    they are: (uri, encoding, damage, decompressed bytes)."""
    out = []
    for uri in uris:
        encoding, damage, at = _inspect(uri)
        if encoding or damage:
            out.append((uri, encoding, damage, at))
    return out


def _inspect(uri: str) -> tuple[str | None, str | None, int]:
    """The encoding of the file at ``uri`` when it is UTF-16 / UTF-32 (else None); for a
    ``.gz`` file, its damage (``"truncated"``, ``"corrupt"`` or None) and the bytes it
    decompresses to before that."""
    try:
        stream, _ = _open_listed(uri)
    except Exception:  # a filesystem only Hadoop knows: Spark reads the file as it is
        return None, None, 0
    with stream:
        if not uri.endswith(".gz"):
            return _encoding(stream.read(8)), None, 0
        head, size = b"", 0
        try:
            for chunk in _gunzip(stream):
                head += chunk[: max(0, 8 - len(head))]
                size += len(chunk)
        except _Broken as broken:
            return _encoding(head), broken.kind, size
        return _encoding(head), None, size


def _encoding(head: bytes) -> str | None:
    """``"utf-16-le"`` / ``"utf-16-be"`` / ``"utf-32-le"`` / ``"utf-32-be"`` for text
    starting with ``head`` (its first 8 bytes) in that encoding, else None (UTF-8).

    A byte order mark counts only when the character after it is ASCII (a JSON line starts
    with ``{``, white space or at least an ASCII character), so a UTF-8 file whose first
    line is binary junk starting with ``FF FE`` stays UTF-8; without a mark, the zero bytes
    of ASCII characters tell (RFC 4627, section 3)."""
    for bom, encoding in _BOMS:
        width = 4 if "32" in encoding else 2
        if head.startswith(bom):
            unit = head[len(bom) : len(bom) + width]
            if len(unit) < width:
                return encoding  # nothing after the mark
            if 0 < int.from_bytes(unit, "little" if encoding.endswith("le") else "big") < 0x80:
                return encoding
    b = head[:4] + b"\x01" * (4 - len(head[:4]))  # a short head: no zero bytes it lacks
    ascii_at = [0 < x < 0x80 for x in b]
    if b[:3] == b"\x00\x00\x00" and ascii_at[3]:
        return "utf-32-be"
    if ascii_at[0] and b[1:4] == b"\x00\x00\x00":
        return "utf-32-le"
    if b[0] == 0 and ascii_at[1] and b[2] == 0 and ascii_at[3]:
        return "utf-16-be"
    if ascii_at[0] and b[1] == 0 and ascii_at[2] and b[3] == 0:
        return "utf-16-le"
    return None


class _Broken(Exception):
    """A gzip stream that breaks off (``kind`` ``"truncated"``) or holds garbage
    (``"corrupt"``)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _gunzip(stream: IO[bytes]) -> Iterator[bytes]:
    """The decompressed content of the gzip ``stream`` (one member or several, as Hadoop
    reads them), :data:`_CHUNK` bytes at most at a time; raises :class:`_Broken` where the
    stream breaks off or stops being gzip."""
    inflate, in_member, data, capped = zlib.decompressobj(31), False, b"", False
    while True:
        if not data and not capped:  # zlib wants more input
            data = stream.read(_CHUNK)
            if not data:
                if in_member:
                    raise _Broken("truncated")
                return
        in_member = True
        try:
            out = inflate.decompress(data, _CHUNK)
        except zlib.error:
            raise _Broken("corrupt") from None
        capped = len(out) == _CHUNK  # zlib may hold more output for the same input
        if out:
            yield out
        if inflate.eof:  # a member ends; another may follow
            data, capped = inflate.unused_data, False
            inflate, in_member = zlib.decompressobj(31), False
        else:
            data = inflate.unconsumed_tail


def _line_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """:func:`_file_lines` of each file (``file``, ``path``, ``encoding``)."""
    for batch in batches:
        rows = batch.to_pydict()
        for file, path, encoding in zip(rows["file"], rows["path"], rows["encoding"], strict=True):
            yield from _file_lines(path, file, encoding or "utf-8")


def _file_lines(uri: str, file: str, encoding: str) -> Iterator[pa.RecordBatch]:
    """The lines of the JSON-lines file at ``uri`` (``file``: its name in the rows), read in
    ``encoding`` (and gunzipped, for ``.gz``), as batches of :data:`_LINES_DDL`: ``line``
    counted from 1 over every line (blank ones included, like :func:`malformed_lines`),
    ``value`` the line as UTF-8 text; blank lines (JSON white space only) left out, as
    Spark's reader leaves them out.

    A line that is not text in ``encoding`` has no value and ``problem`` ``not valid ...``;
    a ``.gz`` stream that breaks off ends with one row for the line it breaks in,
    ``problem`` :data:`GZIP_TRUNCATED` (:data:`GZIP_CORRUPT` for garbage), the partial
    line and the rest of the file being lost. Whole chunks of lines are decoded and split
    at once (numpy, pyarrow): no Python per line but per line that is not text."""
    dtype, _ = _UNITS[encoding]
    width = np.dtype(dtype).itemsize
    stream, _ = _open_listed(uri)
    line, pending, broken, first = 1, b"", None, True
    with stream:
        chunks = _gunzip(stream) if uri.endswith(".gz") else iter(lambda: stream.read(_CHUNK), b"")
        try:
            for chunk in chunks:
                data = pending + chunk
                cut = _after_last_newline(data, dtype)
                pending = data[cut:]
                if cut:
                    batch, line = _lines(data[:cut], encoding, file, line, strip_bom=first)
                    first = False
                    yield batch
        except _Broken as e:
            broken = GZIP_TRUNCATED if e.kind == "truncated" else GZIP_CORRUPT
    if broken:  # the partial line and all after it: one row
        yield pa.RecordBatch.from_pydict(
            {"file": [file], "line": [line], "value": [None], "problem": [broken]},
            schema=_LINES_SCHEMA,
        )
    elif len(pending) % width:  # a last line cut inside a character: not text
        _, not_valid = _UNITS[encoding]
        yield pa.RecordBatch.from_pydict(
            {"file": [file], "line": [line], "value": [None], "problem": [not_valid]},
            schema=_LINES_SCHEMA,
        )
    elif pending:  # a last line without a newline
        batch, _ = _lines(pending + "\n".encode(encoding), encoding, file, line, strip_bom=first)
        yield batch


_LINES_SCHEMA = pa.schema(
    [("file", pa.string()), ("line", pa.int64()), ("value", pa.string()), ("problem", pa.string())]
)


def _after_last_newline(data: bytes, dtype: str) -> int:
    """The offset just after the last newline character of ``data`` (0 if none), in code
    units of ``dtype`` counted from its start."""
    width = np.dtype(dtype).itemsize
    if width == 1:
        return data.rfind(b"\n") + 1
    units = np.frombuffer(data, dtype=dtype, count=len(data) // width)
    found = np.flatnonzero(units == 10)
    return int(found[-1] + 1) * width if found.size else 0


def _mark_undecodable(error: UnicodeError) -> tuple[str, int]:
    """A codecs error handler: each undecodable sequence becomes a lone surrogate, which no
    strict decoding yields, so :func:`_lines` can find the lines that held one."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\udfff", error.end


_MARK = "neardup.mark_undecodable"
codecs.register_error(_MARK, _mark_undecodable)


def _lines(
    block: bytes, encoding: str, file: str, first_line: int, *, strip_bom: bool
) -> tuple[pa.RecordBatch, int]:
    """The lines of ``block`` (whole lines in ``encoding``, the last one ending in a newline)
    as a batch of :data:`_LINES_DDL`, numbered from ``first_line``; and the next number.
    One decoding pass, then numpy and pyarrow over the UTF-8 bytes: Python runs per
    undecodable sequence only (:func:`_mark_undecodable`)."""
    _, not_valid = _UNITS[encoding]
    text = block.decode(encoding, errors=_MARK)
    if strip_bom and text.startswith("\ufeff"):
        text = text[1:]
    utf8 = np.frombuffer(text.encode("utf-8", errors="surrogatepass"), dtype=np.uint8)
    newlines = np.flatnonzero(utf8 == 10)
    n = len(newlines)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = newlines + 1
    marks = np.flatnonzero(utf8[:-1] == 0xED)  # a surrogate is ED A0..BF xx in UTF-8
    marks = marks[utf8[marks + 1] >= 0xA0]
    invalid = np.zeros(n, dtype=bool)
    invalid[np.searchsorted(newlines, marks)] = True  # the line each mark is in
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(utf8)]
    raw = pa.Array.from_buffers(pa.large_binary(), n, buffers)
    invalid_array = pa.array(invalid)
    text_only = pc.if_else(invalid_array, pa.scalar(None, pa.large_binary()), raw)
    values = pc.utf8_rtrim(text_only.cast(pa.large_string()), characters="\r\n")
    blank = pc.fill_null(pc.equal(pc.utf8_trim(values, characters=" \t\r\n"), ""), False)
    keep = pc.or_(pc.invert(blank), invalid_array)
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([file], pa.string()).take(np.zeros(n, dtype=np.int64)),
            pa.array(np.arange(first_line, first_line + n, dtype=np.int64)),
            values.cast(pa.string()),
            pc.if_else(invalid_array, pa.scalar(not_valid), pa.scalar(None, pa.string())),
        ],
        schema=_LINES_SCHEMA,
    )
    return batch.filter(keep), first_line + n


def _open_listed(uri: str) -> tuple[IO[bytes], int]:
    """:func:`open_uri` for a URI as a listing names it (``file:/a b/c``: not %-escaped)."""
    if uri.startswith("file:"):
        local = uri[len("file:") :]
        local = "/" + local.lstrip("/") if local.startswith("//") else local
        return open(local, "rb"), os.path.getsize(local)
    return open_uri(uri)


def _json_checked(source: _JsonSource, schema: StructType, text_col: str) -> DataFrame:
    """JSON lines read with ``schema`` (as Spark infers it), except that a text value that is
    not a JSON string, or not Unicode (:data:`NOT_UNICODE`), stays out of the text column and
    its row, like a line that is not JSON (or not text) at all, has ``read_error`` set (with
    the raw line and its file kept for :func:`malformed_lines`)."""
    fields = schema.fields
    malformed = CORRUPT_RECORD in schema.fieldNames()
    several = source.lines is not None  # rows carry their file, line and reader's error
    as_string = any(f.name == text_col and f.dataType == StringType() for f in fields)
    if not as_string and not malformed:
        return source.read(schema)  # no text column, or one of another type: split_rejects
    error = F.lit(None).cast("string")
    corrupt = F.col(CORRUPT_RECORD)
    if as_string:  # Spark turns 42 or ["a"] into the text "42" / '["a"]': read the JSON value
        variant = [
            StructField(f.name, VariantType(), True) if f.name == text_col else f for f in fields
        ]
        if not malformed:  # a text the variant cannot hold makes its line a corrupt record
            variant.append(StructField(CORRUPT_RECORD, StringType(), True))
        value = F.col(text_col)
        df = source.read(StructType(variant)).withColumn("__kind", F.schema_of_variant(value))
        kind = F.col("__kind")
        error = F.when(_not_unicode(corrupt, text_col), F.lit(NOT_UNICODE)).when(
            kind.isNotNull() & ~kind.isin("STRING", "VOID"), F.lit(NOT_A_STRING)
        )
        text = F.when(kind == "STRING", F.variant_get(value, "$", "string"))
        df = df.withColumn(READ_ERROR, error).withColumn(text_col, text).drop("__kind")
        if not malformed:
            df = df.drop(CORRUPT_RECORD)
        error = F.col(READ_ERROR)
    else:
        df = source.read(schema)
    if malformed:  # Spark keeps the line's bytes as they are: they may not be UTF-8
        unparsed = F.when(F.is_valid_utf8(corrupt), F.lit(MALFORMED_JSON)).otherwise(NOT_UTF8)
        parsed = error.eqNullSafe(F.lit(NOT_UNICODE))  # its line is JSON: its own reason
        error = F.when(corrupt.isNotNull() & ~parsed, unparsed).otherwise(error)
        if not several:
            df = df.withColumn(SOURCE_FILE, F.col("_metadata.file_path"))
    if several:
        error = F.when(F.col(_PROBLEM).isNotNull(), F.col(_PROBLEM)).otherwise(error)
    return df.withColumn(READ_ERROR, error).drop(_PROBLEM)


_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"  # \ud800 to \udfff, as Java regex


def _not_unicode(corrupt: Column, text_col: str) -> Column:
    """True for a row whose text Spark's variant could not hold (``corrupt``: its line, set
    for it alone) while the line is JSON with a surrogate escape: its text holds a lone
    surrogate (:data:`NOT_UNICODE`; Spark reads one as ``?`` in a string column)."""
    strings = StructType(
        [StructField(text_col, StringType()), StructField(CORRUPT_RECORD, StringType())]
    )
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_RECORD}
    parses = F.from_json(corrupt, strings, options)[CORRUPT_RECORD].isNull()
    return (
        corrupt.isNotNull() & F.is_valid_utf8(corrupt) & corrupt.rlike(_SURROGATE_ESCAPE) & parses
    )


def malformed_lines(tagged: DataFrame) -> DataFrame:
    """One reject row (``doc_id``, ``reason``) per row of ``tagged`` (a frame of
    :func:`read_input` with ``reason``) whose reason is one of :data:`LINE_REASONS`:
    ``doc_id`` is ``<file URI>#L<line>``, the line counted from 1 over every line of the
    file, blank ones included. A row of neardup's own line reader has its line; for a line
    Spark's reader saw, one task per affected file reads the file again and finds it by its
    bytes (a line that cannot be found again, e.g. in a file compressed other than by gzip,
    gets ``<file URI>#L?<n>``)."""
    named = tagged.where(F.col(REASON).isin(*LINE_REASONS))
    parts = []
    if SOURCE_LINE in tagged.columns:
        line = F.col(SOURCE_LINE)
        at = F.concat(F.col(SOURCE_FILE), F.lit("#L"), line.cast("string")).alias(DOC_ID)
        parts.append(named.where(line.isNotNull()).select(at, REASON))
        named = named.where(line.isNull())
    if CORRUPT_RECORD in tagged.columns and SOURCE_FILE in tagged.columns:
        corrupt = named.select(
            F.col(SOURCE_FILE).alias("file"),
            F.col(CORRUPT_RECORD).cast("binary").alias("record"),  # its bytes, UTF-8 or not
            REASON,
        )
        parts.append(corrupt.groupBy("file").applyInPandas(_locate, REJECTS_DDL))
    if not parts:
        return tagged.sparkSession.createDataFrame([], REJECTS_DDL)
    return reduce(DataFrame.unionByName, parts)


def _locate(pdf: pd.DataFrame) -> pd.DataFrame:
    """The lines of one file holding its malformed records (see :func:`malformed_lines`)."""
    uri = str(pdf["file"].iloc[0])
    pending: dict[bytes, list[str]] = {}
    for record, reason in zip(pdf["record"].tolist(), pdf[REASON].tolist(), strict=True):
        pending.setdefault(bytes(record).strip(), []).append(str(reason))
    left, found, reasons = len(pdf), [], []
    stream, _ = open_uri(uri)
    with stream:
        lines: Iterable[bytes] = gzip.GzipFile(fileobj=stream) if uri.endswith(".gz") else stream
        try:
            for number, raw in enumerate(lines, start=1):
                waiting = pending.get(raw.strip())
                if waiting:
                    reasons.append(waiting.pop(0))
                    found.append(f"{uri}#L{number}")
                    left -= 1
                    if not left:
                        break
        except (OSError, EOFError):  # a broken compressed stream: the rest stay unlocated
            pass
    rest = [reason for waiting in pending.values() for reason in waiting]
    found += [f"{uri}#L?{n}" for n in range(1, len(rest) + 1)]
    return pd.DataFrame({DOC_ID: found, REASON: reasons + rest})


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
    or a glob; read literally when it exists as written) as one row (``warc.COLUMNS``); rows
    with ``read_error`` set are not documents.

    Notes:
        The driver only lists the files; each is read as a stream by one task on an
        executor (``local``, ``hdfs://``, ``s3://`` / ``s3a://`` and any filesystem pyarrow
        knows), ``rows`` at a time, so a file's size does not bound memory.
    """
    store = HadoopStorage(spark)
    require_input(store, path)
    try:
        files = (
            spark.read.format("binaryFile")
            .option("recursiveFileLookup", "true")
            .load(store.pattern(path))
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
