"""DataFrames crossing the driver: one given as a job's input (the library's ``dedup(df)``,
the dedup job's ``input_table``), its columns checked from its schema alone, before any
Spark job runs; and an Arrow table the driver computed, handed back to Spark as a frame."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, StructType

from neardup_udfs.io.readers import InputError
from neardup_udfs.schemas import (
    CORRUPT_RECORD,
    DOC_ID,
    LOST_BYTES,
    READ_ERROR,
    REASON,
    SOURCE_FILE,
    SOURCE_LINE,
    TEXT,
)

__all__ = ["RESERVED", "arrow_frame", "check_batch", "check_columns", "check_image_columns"]

RESERVED = (DOC_ID, TEXT, REASON, READ_ERROR, LOST_BYTES, CORRUPT_RECORD, SOURCE_FILE, SOURCE_LINE)
"""Column names the run adds to the rows it checks: an input column of one of these names
(other than the id or text column given) is refused."""


def arrow_frame(spark: SparkSession, table: Any) -> DataFrame:
    """``table`` (a pyarrow Table) as a DataFrame of ``spark`` with the table's own columns
    and types, on a classic or a Spark Connect session alike, with rows or without (Connect
    cannot infer a schema from an empty table: it is always given)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.createDataFrame(table, schema=from_arrow_schema(table.schema))


def check_batch(df: Any, api: str) -> None:
    """InputError when ``df`` is a streaming DataFrame (``df.isStreaming``): the library's
    ``api`` (``dedup``, ...) runs batch jobs over a whole frame; a stream goes through it a
    micro-batch at a time (Structured Streaming's ``foreachBatch``). Starts no query."""
    if isinstance(df, DataFrame) and df.isStreaming:
        raise InputError(
            f"{api}() does not take a streaming DataFrame (df.isStreaming): call {api} on "
            "each micro-batch through foreachBatch, e.g. df.writeStream.foreachBatch("
            f"lambda batch, batch_id: {api}(batch, ...)).start()"
        )


def check_columns(df: Any, id_col: str, text_col: str, order_col: str | None = None) -> None:
    """InputError naming the argument at fault unless ``df`` is a pyspark DataFrame (classic
    or Connect) with the columns ``id_col`` (a plain value: compared as a string),
    ``text_col`` (a string) and ``order_col`` (when given), and no column of
    :data:`RESERVED` besides those. Reads the schema only."""
    schema = _schema(df, (("id_col", id_col), ("text_col", text_col), ("order_col", order_col)))
    names = schema.fieldNames()
    text_type = schema[text_col].dataType
    if not isinstance(text_type, StringType):
        raise InputError(
            f"text_col {text_col!r} is {text_type.simpleString()}, not a string column: cast or "
            "decode it first"
        )
    _plain_ids(schema, "id_col", id_col)
    for name in names:
        if name in RESERVED and name not in (id_col, text_col):
            raise InputError(
                f"column {name!r} is reserved by neardup: rename it, or pass it as id_col"
                if name == DOC_ID
                else f"column {name!r} is reserved by neardup: rename it"
            )


def _schema(df: Any, roles: tuple[tuple[str, str | None], ...]) -> StructType:
    """``df``'s schema (the plan's: no Spark job runs); InputError unless ``df`` is a
    pyspark DataFrame with each named column of ``roles`` (argument, column name)."""
    if not isinstance(df, DataFrame):  # a Connect DataFrame is one too (pyspark 4)
        raise InputError(f"expected a pyspark DataFrame, got {type(df).__name__}")
    schema: StructType = df.schema
    names = schema.fieldNames()
    for role, name in roles:
        if name is not None and name not in names:
            shown = ", ".join(names)
            raise InputError(f"{role} {name!r} is not a column of the DataFrame (columns: {shown})")
    return schema


def _plain_ids(schema: StructType, role: str, name: str) -> None:
    """InputError unless column ``name`` holds plain values (ids are compared as strings)."""
    found = schema[name].dataType
    if isinstance(found, ArrayType | MapType | StructType):
        raise InputError(
            f"{role} {name!r} is {found.simpleString()}: ids are plain values (strings, "
            "numbers), compared as strings"
        )


def check_image_columns(df: Any, path_col: str, content_col: str) -> None:
    """InputError naming the argument at fault unless ``df`` is a pyspark DataFrame with
    the columns ``path_col`` (a plain value: compared as a string) and ``content_col``
    (binary: encoded image bytes). Reads the schema only."""
    schema = _schema(df, (("path_col", path_col), ("content_col", content_col)))
    content_type = schema[content_col].dataType
    if not isinstance(content_type, BinaryType):
        raise InputError(
            f"content_col {content_col!r} is {content_type.simpleString()}, not binary (the "
            "encoded image's bytes)"
        )
    _plain_ids(schema, "path_col", path_col)
