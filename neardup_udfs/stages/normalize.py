"""The normalization stage: documents in, the text each pipeline stage reads out."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DOC_ID, TEXT
from neardup_udfs.udfs import normalize_udf

__all__ = ["EMPTY", "is_empty", "prepare"]

EMPTY = "no text after web normalization"  # why an index batch leaves such a document out


def prepare(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, text``: each document's text as ``pipeline`` shingles it (its
    normalization applied once; unchanged without one). One row per input row.

    Notes:
        Every stage that applies the pipeline to text (exact keys, fingerprints, signatures,
        exact verification, index entries and queries) reads this frame's ``text``, never the
        input's.
    """
    if not pipeline.normalization.active:
        return docs.select(DOC_ID, TEXT)
    return docs.select(DOC_ID, normalize_udf(pipeline)(F.col(TEXT)).alias(TEXT))


def is_empty(pipeline: Pipeline) -> Column:
    """True for a prepared text that normalization left empty (a page with no visible text):
    such a document has nothing to compare, so it is nobody's duplicate. Always False
    without normalization (an empty input text stays an exact duplicate of another)."""
    if not pipeline.normalization.active:
        return F.lit(False)
    return F.length(F.col(TEXT)) == 0
