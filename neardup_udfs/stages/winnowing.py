"""Winnowing stages: fingerprints with positions, aligned overlap spans, boilerplate cover.

Every function is DataFrame -> DataFrame and equals a kernel of ``kernels/winnow/`` on
small inputs: ``aligned_spans`` = ``winnow.overlaps`` / ``Index.matches`` (without the
``MAX_RESULTS`` budget, see below), ``cover_regions`` = ``Index.cover``.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from neardup_udfs.driver.batches import winnow_fingerprints_fn
from neardup_udfs.schemas import DOC_ID, TEXT
from neardup_udfs.udfs import remove_ranges_udf

__all__ = [
    "WINNOW_VERSION",
    "aligned_spans",
    "cover_regions",
    "covered_bytes",
    "doc_freq",
    "fingerprints",
    "hot_hashes",
    "remove_regions",
    "winnow_id",
]

WINNOW_VERSION = "semblance-winnow/1"
FINGERPRINTS_DDL = f"{DOC_ID} string, j int, pos bigint, hash bigint"


def winnow_id(kgram_bytes: int, w: int) -> str:
    """The pipeline id stored with winnowing results (``k`` names ``kgram_bytes`` there, a
    frozen format): fingerprints of different k-gram sizes or windows are different values
    and must never be compared."""
    return f"{WINNOW_VERSION};k={kgram_bytes},w={w}"


def fingerprints(docs: DataFrame, kgram_bytes: int, w: int) -> DataFrame:
    """``doc_id, j, pos, hash``: every winnowing fingerprint of every document (k-grams of
    ``kgram_bytes`` bytes, windows of ``w`` k-grams).

    ``docs`` has ``doc_id`` and ``text`` (string or binary; byte offsets of its UTF-8).
    ``j`` numbers a document's fingerprints from 0 in position order.
    """
    fn = winnow_fingerprints_fn(kgram_bytes, w)
    return docs.select(DOC_ID, TEXT).mapInPandas(fn, FINGERPRINTS_DDL)


def doc_freq(fps: DataFrame, group: str | None = None) -> DataFrame:
    """``hash [, group], docs``: the number of distinct documents holding each hash
    (within each value of the ``group`` column when given; ``fps`` must then carry it)."""
    keys = ["hash"] if group is None else [group, "hash"]
    return fps.groupBy(*keys).agg(F.countDistinct(DOC_ID).alias("docs"))


def hot_hashes(fps: DataFrame, max_occurrences: int) -> DataFrame:
    """``hash, occurrences`` of the hashes that occur more than ``max_occurrences`` times in
    ``fps`` (counting every position of every document, so a hash repeated within one
    document counts each time: the matches of one hash are bounded by the square of it)."""
    counted = fps.groupBy("hash").agg(F.count("*").alias("occurrences"))
    return counted.where(F.col("occurrences") > max_occurrences)


def _islands(partition: list[str], order: str) -> Column:
    """Gaps-and-islands: equal values mark maximal runs of consecutive ``order`` values."""
    w = Window.partitionBy(*partition).orderBy(order)
    return F.col(order) - F.row_number().over(w)


def aligned_spans(
    query: DataFrame, corpus: DataFrame, kgram_bytes: int, pairs: DataFrame | None = None
) -> DataFrame:
    """``q_id, d_id, q_start, d_start, length``: passages a query shares with corpus documents.

    Args:
        query: fingerprints (``doc_id, j, pos, hash``) of the query documents.
        corpus: fingerprints (``doc_id, pos, hash``) of the corpus documents.
        kgram_bytes: the k-gram size both were made with.
        pairs: ``q_id, d_id``: compare only these (query, corpus) pairs; else every pair
            sharing a hash.

    Notes:
        For one query document and all corpus documents this is ``Index.matches`` (id =
        ``d_id``, query_pos = ``q_start``, doc_pos = ``d_start``); for one pair (a, b) with
        b as the query it is ``overlaps(a, b)`` (pos_a = ``d_start``, pos_b = ``q_start``).
        Each shared hash occurrence is a match on the diagonal ``d_pos - q_pos``; a run on a
        diagonal continues while its matches come from consecutive query fingerprints (j),
        and becomes a span of length ``last q_pos + kgram_bytes - first q_pos``. The
        kernels' budget of ``MAX_RESULTS`` matches per query is not applied (a distributed
        join has no scan order); drop hashes shared by many documents (``hot_hashes``) to
        bound the work.
    """
    q = query.select(F.col(DOC_ID).alias("q_id"), "j", F.col("pos").alias("q_pos"), "hash")
    d = corpus.select(F.col(DOC_ID).alias("d_id"), F.col("pos").alias("d_pos"), "hash")
    matches = q.join(d, "hash")
    if pairs is not None:
        matches = matches.join(pairs.select("q_id", "d_id"), ["q_id", "d_id"], "left_semi")
    diagonal = matches.withColumn("diag", F.col("d_pos") - F.col("q_pos"))
    keys = ["q_id", "d_id", "diag"]
    runs = diagonal.withColumn("island", _islands(keys, "j"))
    spans = runs.groupBy(*keys, "island").agg(
        F.min("q_pos").alias("q_start"), F.max("q_pos").alias("q_end")
    )
    return spans.select(
        "q_id",
        "d_id",
        "q_start",
        (F.col("q_start") + F.col("diag")).alias("d_start"),
        (F.col("q_end") + kgram_bytes - F.col("q_start")).alias("length"),
    )


def covered_bytes(spans: DataFrame, keys: list[str], start: str, length: str) -> DataFrame:
    """``keys..., covered``: bytes in the union of the ``[start, start + length)`` ranges of
    each ``keys`` group (overlapping ranges count once)."""
    earlier = (
        Window.partitionBy(*keys).orderBy(start, length).rowsBetween(Window.unboundedPreceding, -1)
    )
    end = F.col(start) + F.col(length)
    reach = F.max(end).over(earlier)
    begin = F.greatest(F.col(start), F.coalesce(reach, F.col(start)))
    fresh = spans.select(*keys, F.greatest(F.lit(0), end - begin).alias("__fresh"))
    return fresh.groupBy(*keys).agg(F.sum("__fresh").cast("bigint").alias("covered"))


def cover_regions(
    fps: DataFrame,
    freq: DataFrame,
    kgram_bytes: int,
    min_docs: int,
    min_run: int,
    group: str | None = None,
    *,
    signatures: bool = False,
) -> DataFrame:
    """``doc_id, start, length``: each document's boilerplate regions (``Index.cover``).

    Notes:
        A fingerprint qualifies when its hash is held by at least ``min_docs`` documents
        (``freq`` from :func:`doc_freq`, with the same ``group``; the document itself
        counts). Consecutive qualifying fingerprints (consecutive ``j``) form a run; a run of
        ``n >= max(min_run, 1)`` fingerprints from pos s to e is the region
        ``(s, e + kgram_bytes - s)``. With ``signatures``: ``doc_id [, group], start,
        length, signature``, the signature being the sorted distinct hashes of the run.
    """
    keys = ["hash"] if group is None else [group, "hash"]
    qualifying = fps.join(freq.where(F.col("docs") >= min_docs).select(*keys), keys, "left_semi")
    runs = qualifying.withColumn("island", _islands([DOC_ID], "j"))
    carried = [group] if signatures and group is not None else []
    extra = [F.sort_array(F.collect_set("hash")).alias("signature")] if signatures else []
    regions = runs.groupBy(DOC_ID, *carried, "island").agg(
        F.min("pos").alias("start"), F.max("pos").alias("end"), F.count("*").alias("n"), *extra
    )
    length = (F.col("end") + kgram_bytes - F.col("start")).alias("length")
    named = ["signature"] if signatures else []
    return regions.where(F.col("n") >= max(min_run, 1)).select(
        DOC_ID, *carried, "start", length, *named
    )


def remove_regions(docs: DataFrame, regions: DataFrame) -> DataFrame:
    """``docs`` with ``text`` minus its regions, plus ``removed_fraction`` (of its bytes).

    Notes:
        Regions are byte ranges; each cut is widened to whole UTF-8 characters (a range
        that starts or ends inside a multi-byte character takes all of it), so the cleaned
        text is valid UTF-8. Overlapping regions are removed once. Documents without a
        region are unchanged (fraction 0).
    """
    ranges = regions.groupBy(DOC_ID).agg(
        F.sort_array(F.collect_list(F.struct("start", "length"))).alias("__ranges")
    )
    joined = docs.join(ranges, DOC_ID, "left")
    cleaned = remove_ranges_udf()(F.col(TEXT), F.col("__ranges"))
    return (
        joined.withColumn("__clean", cleaned)
        .withColumn(TEXT, F.col("__clean.text"))
        .withColumn("removed_fraction", F.col("__clean.removed_fraction"))
        .drop("__ranges", "__clean")
    )
