"""The exact-duplicate stage: documents with the same canonical text form one group."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DOC_ID, EXACT_KEY, LEADER, TEXT
from neardup_udfs.stages.normalize import is_empty
from neardup_udfs.udfs import exact_key_udf

__all__ = ["exact_groups"]


def exact_groups(docs: DataFrame, pipeline: Pipeline) -> DataFrame:
    """``doc_id, leader, exact_key`` for every document: the leader is the smallest id of its
    group, ``exact_key`` the group's key (``Pipeline.exact_keys``).

    Notes:
        Two documents are exact duplicates when their canonical forms under the preset are
        equal (``Pipeline.exact_keys``): they would get identical fingerprints. Only leaders
        go through fingerprinting and LSH; the others join their leader's cluster. The work
        is linear in the group size (a window minimum), so 100,000 copies of one text cost
        100,000 rows, not 100,000**2 pairs. ``docs`` is the prepared text
        (``stages.normalize.prepare``); a document normalization left empty is its own
        group, with a null key.
    """
    empty = is_empty(pipeline)
    key = F.when(empty, F.lit(None).cast("string")).otherwise(exact_key_udf(pipeline)(F.col(TEXT)))
    keyed = docs.select(DOC_ID, key.alias(EXACT_KEY), empty.alias("__empty"))
    group = Window.partitionBy(EXACT_KEY)
    leader = F.when(F.col("__empty"), F.col(DOC_ID)).otherwise(F.min(DOC_ID).over(group))
    return keyed.select(DOC_ID, leader.alias(LEADER), EXACT_KEY)
