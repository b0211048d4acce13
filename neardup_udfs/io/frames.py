"""A DataFrame given as a job's input (the library's ``dedup(df)``, the dedup job's
``input_table``): its columns checked from its schema alone, before any Spark job runs."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
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

__all__ = ["RESERVED", "check_columns", "check_image_columns"]

RESERVED = (DOC_ID, TEXT, REASON, READ_ERROR, LOST_BYTES, CORRUPT_RECORD, SOURCE_FILE, SOURCE_LINE)
"""Column names the run adds to the rows it checks: an input column of one of these names
(other than the id or text column given) is refused."""


def check_columns(df: Any, id_col: str, text_col: str, order_col: str | None = None) -> None:
    """InputError naming the argument at fault unless ``df`` is a pyspark DataFrame (classic
    or Connect) with the columns ``id_col`` (a plain value: compared as a string),
    ``text_col`` (a string) and ``order_col`` (when given), and no column of
    :data:`RESERVED` besides those. Reads the schema only."""
    if not isinstance(df, DataFrame) and not _is_connect_frame(df):
        raise InputError(f"expected a pyspark DataFrame, got {type(df).__name__}")
    schema = df.schema  # the plan's schema: no Spark job runs
    names = schema.fieldNames()
    shown = ", ".join(names)
    for role, name in (("id_col", id_col), ("text_col", text_col), ("order_col", order_col)):
        if name is not None and name not in names:
            raise InputError(f"{role} {name!r} is not a column of the DataFrame (columns: {shown})")
    text_type = schema[text_col].dataType
    if not isinstance(text_type, StringType):
        raise InputError(
            f"text_col {text_col!r} is {text_type.simpleString()}, not a string column: cast or "
            "decode it first"
        )
    id_type = schema[id_col].dataType
    if isinstance(id_type, ArrayType | MapType | StructType):
        raise InputError(
            f"id_col {id_col!r} is {id_type.simpleString()}: ids are plain values (strings, "
            "numbers), compared as strings"
        )
    for name in names:
        if name in RESERVED and name not in (id_col, text_col):
            raise InputError(
                f"column {name!r} is reserved by neardup: rename it, or pass it as id_col"
                if name == DOC_ID
                else f"column {name!r} is reserved by neardup: rename it"
            )


def _is_connect_frame(df: Any) -> bool:
    return type(df).__module__.startswith("pyspark.sql.connect")


def check_image_columns(df: Any, path_col: str, content_col: str) -> None:
    """InputError naming the argument at fault unless ``df`` is a pyspark DataFrame with
    the columns ``path_col`` (a plain value: compared as a string) and ``content_col``
    (binary: encoded image bytes). Reads the schema only."""
    if not isinstance(df, DataFrame) and not _is_connect_frame(df):
        raise InputError(f"expected a pyspark DataFrame, got {type(df).__name__}")
    schema = df.schema
    names = schema.fieldNames()
    for role, name in (("path_col", path_col), ("content_col", content_col)):
        if name not in names:
            raise InputError(
                f"{role} {name!r} is not a column of the DataFrame (columns: {', '.join(names)})"
            )
    content_type = schema[content_col].dataType
    if not isinstance(content_type, BinaryType):
        raise InputError(
            f"content_col {content_col!r} is {content_type.simpleString()}, not binary (the "
            "encoded image's bytes)"
        )
    path_type = schema[path_col].dataType
    if isinstance(path_type, ArrayType | MapType | StructType):
        raise InputError(
            f"path_col {path_col!r} is {path_type.simpleString()}: ids are plain values"
        )
