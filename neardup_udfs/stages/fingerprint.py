"""The fingerprint stage: documents in, one fingerprint per document out, rejects apart."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from neardup_udfs.driver.batches import document_features_fn
from neardup_udfs.io.reasons import NULL_ID, NULL_TEXT
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import (
    BAND_KEYS,
    DOC_ID,
    EMPTY_TEXT,
    EXACT_KEY,
    FINGERPRINT,
    FINGERPRINT_HEX,
    LENGTH,
    PIPELINE,
    REASON,
    SIGNATURE,
    TEXT,
)
from neardup_udfs.stages.normalize import prepare
from neardup_udfs.udfs import fingerprint_udf, signature_udf

__all__ = ["Fingerprinted", "document_features", "fingerprint", "sketch", "to_hex"]


@dataclass(frozen=True)
class Fingerprinted:
    """The stage's two outputs: every input row is in exactly one of them."""

    fingerprints: DataFrame  # doc_id, fingerprint, fingerprint_hex, pipeline
    rejects: DataFrame  # doc_id, reason


def to_hex(col: Column) -> Column:
    """A bigint fingerprint as 16 lowercase hex digits (its unsigned 64-bit value)."""
    return F.lpad(F.lower(F.hex(col)), 16, "0")


def fingerprint(docs: DataFrame, pipeline: Pipeline) -> Fingerprinted:
    """Fingerprint ``docs`` (columns ``doc_id``, ``text``) with ``pipeline``.

    Notes:
        Rows with a null ``doc_id`` or a null ``text`` go to ``rejects`` with a reason; all
        others get a fingerprint of their text as the pipeline normalizes it. Every output
        row carries the pipeline id.
    """
    reason = (
        F.when(F.col(DOC_ID).isNull(), F.lit(NULL_ID))
        .when(F.col(TEXT).isNull(), F.lit(NULL_TEXT))
        .otherwise(F.lit(None).cast("string"))
    )
    tagged = docs.select(DOC_ID, TEXT, reason.alias(REASON))
    rejects = tagged.where(F.col(REASON).isNotNull()).select(DOC_ID, REASON)
    fp = fingerprint_udf(pipeline)(F.col(TEXT))
    good = (
        prepare(tagged.where(F.col(REASON).isNull()), pipeline)
        .select(DOC_ID, fp.alias(FINGERPRINT))
        .withColumn(FINGERPRINT_HEX, to_hex(F.col(FINGERPRINT)))
        .withColumn(PIPELINE, F.lit(pipeline.id))
    )
    return Fingerprinted(good, rejects)


def sketch(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id`` plus the pipeline's value: ``fingerprint`` bigint or ``signature`` array,
    of ``docs`` prepared by ``stages.normalize.prepare``."""
    if pipeline.kind == "simhash":
        return docs.select(DOC_ID, fingerprint_udf(pipeline)(F.col(TEXT)).alias(FINGERPRINT))
    return docs.select(DOC_ID, signature_udf(pipeline)(F.col(TEXT)).alias(SIGNATURE))


def document_features(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, exact_key, empty_text, length`` and the pipeline's sketch (``fingerprint``
    bigint, or ``signature`` and its LSH ``band_keys``, arrays) of every row of ``docs``
    (``doc_id, text``, no null text), from one pass over each text
    (``driver.batches.document_features_fn``).

    Notes:
        ``exact_key`` and the sketch are those of ``stages.exact.exact_keys`` and
        :func:`sketch` on the prepared text (``stages.normalize.prepare``); ``empty_text``
        is ``stages.normalize.is_empty`` of it (its key is null); ``length`` is the input
        text's UTF-8 bytes. The normalized text is never returned.
    """
    value = (
        f"{FINGERPRINT} bigint"
        if pipeline.kind == "simhash"
        else f"{SIGNATURE} array<bigint>, {BAND_KEYS} array<bigint>"
    )
    schema = f"{DOC_ID} string, {EXACT_KEY} string, {EMPTY_TEXT} boolean, {LENGTH} bigint, {value}"
    return docs.select(DOC_ID, TEXT).mapInArrow(document_features_fn(pipeline), schema)
