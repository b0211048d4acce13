"""The exact-duplicate stage: documents with the same canonical text form one group."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DOC_ID, EXACT_KEY, LEADER, TEXT
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
        100,000 rows, not 100,000**2 pairs.
    """
    keyed = docs.select(DOC_ID, exact_key_udf(pipeline)(F.col(TEXT)).alias(EXACT_KEY))
    group = Window.partitionBy(EXACT_KEY)
    return keyed.select(DOC_ID, F.min(DOC_ID).over(group).alias(LEADER), EXACT_KEY)
