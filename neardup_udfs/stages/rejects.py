"""The rejects stage: rows that cannot be deduplicated go to ``rejects/`` with a reason."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType

from neardup_udfs.io.reasons import (
    DUPLICATE_ID,
    ID_NULL,
    NULL_ID,
    NULL_TEXT,
    READER,
    ROW_RULES,
    TEXT_NULL,
    TEXT_SIZE,
    TEXT_TYPE,
    too_large,
    wrong_type,
)
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

__all__ = ["Split", "split_rejects"]


@dataclass(frozen=True)
class Split:
    good: DataFrame  # every input column, plus doc_id and text
    rejects: DataFrame  # doc_id, reason
    tagged: DataFrame  # every row, with reason (null = good): good and rejects filter it


def split_rejects(df: DataFrame, text_col: str, max_text_bytes: int) -> Split:
    """Split ``df`` (with ``doc_id``) into processable rows and rejects.

    Notes:
        Reasons, first match wins: the reader's own (``read_error``, when the input has that
        column: a WARC record that is not a document, a JSON line that
        does not parse, a JSON text value that is not a string); ``null doc_id``; ``text column is
        <type>, not a string`` (every row, when the column's type is neither string nor
        binary); ``null text``; ``text larger than N bytes``; ``duplicate doc_id``: of the
        rows of a repeated id that pass every check above, all but one (the one with the
        smallest text, so the choice does not depend on partitioning) -- a copy rejected for
        its own reason never takes the place of a good one. Every input
        row ends in exactly one of ``good`` (with all its columns, and ``text``) and
        ``rejects``. Both are filters of ``tagged``: persist it, and the input is read and
        ranked once for both.
    """
    dtype = df.schema[text_col].dataType
    typed = isinstance(dtype, StringType | BinaryType)
    text = F.col(text_col) if typed else F.lit(None).cast("string")
    base = df.withColumn(TEXT, text)
    read_error = F.col(READ_ERROR) if READ_ERROR in df.columns else F.lit(None).cast("string")
    rules = {  # io.reasons.ROW_RULES, as (matches, reason) Columns
        READER: (read_error.isNotNull(), read_error),
        ID_NULL: (F.col(DOC_ID).isNull(), F.lit(NULL_ID)),
        TEXT_TYPE: (F.lit(not typed), F.lit(wrong_type(dtype.simpleString()))),
        TEXT_NULL: (F.col(TEXT).isNull(), F.lit(NULL_TEXT)),
        TEXT_SIZE: (F.octet_length(F.col(TEXT)) > max_text_bytes, F.lit(too_large(max_text_bytes))),
    }
    own = F.lit(None).cast("string")
    for rule in reversed(ROW_RULES):  # the first rule that matches wins: the outermost
        matches, why = rules[rule]
        own = F.when(matches, why).otherwise(own)
    checked = base.withColumn(REASON, own)
    passing_first = F.col(REASON).isNotNull().asc()  # false (passes) sorts first
    order = Window.partitionBy(DOC_ID).orderBy(passing_first, F.col(TEXT).asc_nulls_last())
    ranked = checked.withColumn("__rank", F.row_number().over(order))
    duplicate = F.when(F.col("__rank") > 1, F.lit(DUPLICATE_ID))
    tagged = ranked.withColumn(REASON, F.coalesce(F.col(REASON), duplicate)).drop("__rank")
    reader_only = (REASON, READ_ERROR, LOST_BYTES, CORRUPT_RECORD, SOURCE_FILE, SOURCE_LINE)
    good = tagged.where(F.col(REASON).isNull()).drop(*reader_only)
    rejects = tagged.where(F.col(REASON).isNotNull()).select(DOC_ID, REASON)
    return Split(good, rejects, tagged)
