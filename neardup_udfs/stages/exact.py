"""The exact-duplicate stage: documents with the same canonical text form one group."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from neardup_udfs.driver.leaders import leaders_fn
from neardup_udfs.presets import NO_TOKENS_KEY, Pipeline
from neardup_udfs.schemas import DOC_ID, EMPTY_TEXT, EXACT_KEY, LEADER, TEXT
from neardup_udfs.stages.normalize import is_empty
from neardup_udfs.udfs import exact_key_udf

__all__ = ["NO_TOKENS_KEY", "exact_groups", "exact_keys", "led"]

_EMPTY = "__empty"


def exact_keys(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, exact_key`` of every document of ``docs`` (the prepared text,
    ``stages.normalize.prepare``): equal keys are exact duplicates.

    Notes:
        The key is the one of ``Pipeline.exact_keys`` (the hash of the canonical form:
        semblance's token sequence, ditto's normalized text), except for two kinds of text:

        - a text normalization left empty (``stages.normalize.is_empty``): a null key;
        - a text with an empty canonical form that normalization did not empty (no token:
          emoji, punctuation or symbols only; ditto without normalization: whitespace or
          markup only): the first 128 bits (32 hex digits) of the SHA-256 of its prepared
          text's UTF-8 bytes. Their canonical forms are all equal, so the canonical key
          would make every two of them exact duplicates; this key makes byte-identical
          prepared texts, and only those, equal.

        The second hash is Spark's own (no Python), evaluated only for token-less texts.
    """
    return _keyed(docs, pipeline).select(DOC_ID, EXACT_KEY)


def _keyed(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, exact_key, __empty`` (:func:`exact_keys`; ``__empty``: ``is_empty``)."""
    empty = is_empty(pipeline)
    canonical = F.when(empty, F.lit(None).cast("string")).otherwise(
        exact_key_udf(pipeline)(F.col(TEXT))
    )
    first = docs.select(DOC_ID, TEXT, canonical.alias(EXACT_KEY), empty.alias(_EMPTY))
    own = F.substring(F.sha2(F.col(TEXT).cast("binary"), 256), 1, 32)
    key = F.when(F.col(EXACT_KEY) == F.lit(NO_TOKENS_KEY), own).otherwise(F.col(EXACT_KEY))
    return first.select(DOC_ID, key.alias(EXACT_KEY), _EMPTY)


def exact_groups(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, leader, exact_key`` for every document: the leader is the smallest id of its
    group, ``exact_key`` the group's key (:func:`exact_keys`).

    Notes:
        Two documents are exact duplicates when their canonical forms under the preset are
        equal (``Pipeline.exact_keys``): they would get identical fingerprints. Only leaders
        go through fingerprinting and LSH; the others join their leader's cluster. The work
        is linear in the group size (one shuffle by key and a sort), so 100,000 copies of
        one text cost 100,000 rows, not 100,000**2 pairs. ``docs`` is the prepared text
        (``stages.normalize.prepare``); a document normalization left empty is its own
        group, with a null key. A text without a token (its canonical form is empty) is an
        exact duplicate only of byte-identical prepared texts, never of a different
        token-less text: an empty token sequence is no evidence that two texts are alike.
    """
    return _led(_keyed(docs, pipeline), _EMPTY).select(DOC_ID, LEADER, EXACT_KEY)


def led(features: DataFrame) -> DataFrame:
    """``features`` (``stages.fingerprint.document_features``) with ``leader``: the
    smallest ``doc_id`` of the row's exact-duplicate group (equal ``exact_key``), or the
    row's own id when normalization left it no text (``empty_text``).

    Notes:
        The groups of :func:`exact_groups`, from keys already computed: one shuffle of the
        small feature rows, linear in a group's size. The rule is the core's
        (``driver.leaders``), the one the local engine applies.
    """
    return _led(features, EMPTY_TEXT)


def _led(rows: DataFrame, empty: str) -> DataFrame:
    """``rows`` with ``leader`` (``driver.leaders``; ``empty``: the rows that lead themselves)."""
    schema = StructType([*rows.schema.fields, StructField(LEADER, StringType())])
    by_key = rows.repartition(EXACT_KEY).sortWithinPartitions(EXACT_KEY, DOC_ID)
    return by_key.mapInArrow(leaders_fn(empty), schema)
