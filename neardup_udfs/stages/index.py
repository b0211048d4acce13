"""The index stages: documents into a persistent index, new documents against it, and
near / similar queries as Spark jobs (layout and commit protocol: ``index.store``)."""

from __future__ import annotations

import logging
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from neardup_udfs.index import store as index_store
from neardup_udfs.index.query import near_ranked, similar_ranked
from neardup_udfs.index.store import EXACT_BAND, Batch, IndexManifest, scheme_of
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.schemas import (
    BAND,
    DISTANCE,
    DOC_ID,
    EXACT_KEY,
    FINGERPRINT,
    INDEXED_ID,
    KEY,
    REASON,
    SEQ,
    SIGNATURE,
    SIMILARITY,
)
from neardup_udfs.session import cut
from neardup_udfs.stages.candidates import simhash_table_keys
from neardup_udfs.stages.verify import estimated_jaccard, hamming
from neardup_udfs.udfs import prefix_keys_udf

__all__ = [
    "DEPTH",
    "IndexReader",
    "IndexedBatch",
    "add_batch",
    "exact_band_key",
    "index_keys",
    "match_index",
    "query_near",
    "query_similar",
    "value_col",
]

log = logging.getLogger("neardup.index")
DEPTH = "depth"
BROADCAST_SEQS = 4_000_000  # matched indexed documents up to which their lookup is broadcast


def value_col(kind: str) -> str:
    """The column holding a ``kind`` pipeline's value: ``fingerprint`` or ``signature``."""
    return FINGERPRINT if kind == "simhash" else SIGNATURE


def exact_band_key(exact_key: Column) -> Column:
    """The keys/ entry of an exact key (band -1): its first 64 bits as a signed bigint."""
    return F.conv(F.substring(exact_key, 1, 16), 16, -10).cast("bigint")


def index_keys(
    docs: DataFrame, manifest: IndexManifest, id_col: str = SEQ, depths: str = "all"
) -> DataFrame:
    """``band, depth, key, <id_col>`` of documents (``id_col``, ``exact_key`` and the
    fingerprint or signature): the rows the index stores in keys/.

    Notes:
        SimHash: a key per table of the index's key scheme (depth 1). MinHash: the Mix fold
        of every band prefix, depth 1 .. rows (depth = rows is the band key); ``depths =
        "full"`` gives the band keys only. A signature of an empty shingle set, or a SimHash
        of 0 (a text with no features), gets no band rows, as in the dedup job. Every
        document also gets band -1: its exact key, at the full depth.
    """
    full = manifest.full_depth
    exact = docs.select(
        F.lit(EXACT_BAND).alias(BAND),
        F.lit(full).alias(DEPTH),
        exact_band_key(F.col(EXACT_KEY)).alias(KEY),
        id_col,
    )
    if manifest.kind == "simhash":  # a featureless text's SimHash 0 gets no rows (band_keys)
        blocks = docs.where(F.col(FINGERPRINT) != 0).select(
            id_col, F.posexplode(simhash_table_keys(F.col(FINGERPRINT), scheme_of(manifest)))
        )
        lsh_rows = blocks.select(
            F.col("pos").alias(BAND), F.lit(1).alias(DEPTH), F.col("col").alias(KEY), id_col
        )
    else:
        bands, rows = int(manifest.shape["bands"]), int(manifest.shape["rows"])
        sigs = docs.where(~F.forall(F.col(SIGNATURE), lambda x: x == F.lit(-1)))
        exploded = sigs.select(id_col, F.posexplode(prefix_keys_udf(bands, rows)(F.col(SIGNATURE))))
        lsh_rows = exploded.select(
            (F.col("pos") / rows).cast("int").alias(BAND),
            (F.col("pos") % rows + 1).cast("int").alias(DEPTH),
            F.col("col").alias(KEY),
            id_col,
        )
        if depths == "full":
            lsh_rows = lsh_rows.where(F.col(DEPTH) == full)
    return lsh_rows.unionByName(
        exact.select(F.col(BAND).cast("int"), F.col(DEPTH).cast("int"), KEY, id_col)
    )


def _with_seq(docs: DataFrame, number: int, keep: Callable[[DataFrame], DataFrame]) -> DataFrame:
    """``docs`` plus ``seq``: ``seq_base(number)`` + the rank of ``doc_id`` in the batch
    (0-based, in UTF-8 byte order), computed without a single-partition sort."""
    ranged = keep(docs.repartitionByRange(DOC_ID).withColumn("__part", F.spark_partition_id()))
    sizes = sorted((r["__part"], r["count"]) for r in ranged.groupBy("__part").count().collect())
    offsets, total = [], 0
    for part, count in sizes:
        offsets.append((part, total))
        total += count
    spark = docs.sparkSession
    offset_df = spark.createDataFrame(offsets, "__part int, __offset bigint")
    local = F.row_number().over(Window.partitionBy("__part").orderBy(DOC_ID)) - 1
    base = index_store.seq_base(number)
    return (
        ranged.join(F.broadcast(offset_df), "__part")
        .withColumn(SEQ, F.lit(base) + F.col("__offset") + local)
        .drop("__part", "__offset")
    )


@dataclass(frozen=True)
class IndexedBatch:
    """What an add did: the batch (None when the batch id was already committed) and the
    manifest the index has now."""

    batch: Batch | None
    manifest: IndexManifest
    removed_uncommitted: list[str]


def add_batch(
    path: str,
    manifest: IndexManifest,
    previous: IndexManifest | None,
    batch_id: str,
    docs: DataFrame,
    rejects: DataFrame | None,
    keep: Callable[[DataFrame], DataFrame] = lambda df: df,
) -> IndexedBatch:
    """Append ``docs`` (``doc_id, exact_key`` and the fingerprint or signature) to the index
    at ``path`` as batch ``batch_id``, atomically: the batch is visible once the manifest
    listing it is committed, and a failure before that leaves the index as ``previous``.

    Notes:
        ``manifest`` is ``previous`` (or a new index's empty manifest). A batch id that is
        already committed adds nothing. Directories of uncommitted earlier attempts are
        removed first (one writer at a time; a concurrent commit is detected and fails).
        The committed batch records its folders' data files (``index_store.Fileset``).
    """
    done = manifest.batch(batch_id)
    if done is not None:
        log.info("batch %r is already in index %s: nothing to add", batch_id, path)
        return IndexedBatch(None, manifest, [])
    store = HadoopStorage(docs.sparkSession)  # where Spark writes the batch's files
    removed = index_store.remove_uncommitted(path, previous, store)
    number, rel = index_store.next_batch(manifest, batch_id)
    root = path.rstrip("/") + "/" + rel
    value = value_col(manifest.kind)
    # checkpointed: the batch's plan starts from its rows (a dedup run's plan is deep, and
    # Spark renders every written plan as a string)
    rows = docs.select(DOC_ID, EXACT_KEY, value).transform(cut)
    seqd = keep(_with_seq(rows, number, keep))
    n_docs = seqd.count()
    seqd.select(SEQ, DOC_ID, EXACT_KEY, value).sortWithinPartitions(SEQ).write.parquet(
        root + "/docs"
    )
    keys = index_keys(seqd, manifest)
    (
        keys.repartition(BAND, DEPTH)
        .sortWithinPartitions(BAND, DEPTH, KEY)
        .write.partitionBy(BAND, DEPTH)
        .parquet(root + "/keys")
    )
    n_rejected = 0
    if rejects is not None:
        rejects.select(DOC_ID, REASON).write.parquet(root + "/rejects")
        n_rejected = rejects.count()
    # what the batch's folders hold, recorded so that index_store.check_index finds a
    # deleted, truncated or added file before a run reads the index
    contents = index_store.batch_contents(path, rel, store)
    batch = Batch(batch_id, number, rel, n_docs, n_rejected, round(time.time(), 3), contents)
    committed = index_store.commit(
        path, previous, replace(manifest, batches=(*manifest.batches, batch)), store
    )
    log.info("index %s: batch %r committed (%d documents)", path, batch_id, n_docs)
    return IndexedBatch(batch, committed, removed)


class IndexReader:
    """The committed batches of an index as Spark frames (only listed batches are read)."""

    def __init__(self, spark: SparkSession, path: str, manifest: IndexManifest) -> None:
        self.spark, self.path, self.manifest = spark, path, manifest

    def _dirs(self, sub: str) -> list[str]:
        """``sub`` of every committed batch with documents (an empty batch, e.g. a crawl
        whose every document duplicated the index, wrote no Parquet files to read)."""
        root = self.path.rstrip("/")
        return [posixpath.join(root, b.dir, sub) for b in self.manifest.batches if b.documents]

    def keys(self, depth: int) -> DataFrame:
        """``band, key, seq`` of the stored keys at ``depth`` (each scan reads one depth)."""
        frames = [
            self.spark.read.parquet(d).where(F.col(DEPTH) == depth).select(BAND, KEY, SEQ)
            for d in self._dirs("keys")
        ]
        if not frames:
            return self.spark.createDataFrame([], f"{BAND} int, {KEY} bigint, {SEQ} bigint")
        out = frames[0]
        for f in frames[1:]:
            out = out.unionByName(f)
        return out

    def documents_of(self, seqs: DataFrame) -> DataFrame:
        """:meth:`docs` of the given ``seq`` values only (a frame of distinct seqs). Up to
        ``BROADCAST_SEQS`` of them are broadcast: the index's documents are then filtered
        where they are read, not shuffled, so the cost follows the matches, not the index."""
        if seqs.count() <= BROADCAST_SEQS:
            seqs = F.broadcast(seqs)
        return self.docs().join(seqs, SEQ, "left_semi")

    def docs(self) -> DataFrame:
        """``seq, doc_id, exact_key`` and the fingerprint or signature of every document."""
        value = value_col(self.manifest.kind)
        dirs = self._dirs("docs")
        if not dirs:
            vtype = "bigint" if value == FINGERPRINT else "array<bigint>"
            return self.spark.createDataFrame(
                [], f"{SEQ} bigint, {DOC_ID} string, {EXACT_KEY} string, {value} {vtype}"
            )
        return self.spark.read.parquet(*dirs).select(SEQ, DOC_ID, EXACT_KEY, value)


def match_index(
    reader: IndexReader,
    new_docs: DataFrame,
    *,
    max_distance: int,
    threshold: float,
    hot_bucket_size: int,
) -> DataFrame:
    """``doc_id, indexed_id, seq`` and ``distance`` (SimHash) or ``similarity`` (MinHash):
    every new document (``doc_id, exact_key`` and its value) near an indexed one.

    Notes:
        Candidates share a band key (or block, or exact key) with an indexed document. An
        indexed bucket with more than ``hot_bucket_size`` members contributes only its hub
        (smallest seq), as hot buckets do within a run. SimHash pairs are kept within
        ``max_distance`` bits (its old name ``k=`` still works, with a DeprecationWarning);
        MinHash pairs at an estimated Jaccard >= ``threshold`` (the index holds signatures,
        not texts), or with equal exact keys (similarity 1). Reads the keys at the full
        depth only, and the documents of matched keys only.
    """
    manifest = reader.manifest
    value = value_col(manifest.kind)
    # checkpointed: read twice below, and later plans start from these rows, not their plan
    new_docs = new_docs.transform(cut)
    new_keys = index_keys(new_docs, manifest, id_col=DOC_ID, depths="full").drop(DEPTH)
    new_keys = new_keys.transform(cut)
    stored = reader.keys(manifest.full_depth)
    matched = stored.join(new_keys.select(BAND, KEY).distinct(), [BAND, KEY], "left_semi")
    bucket = Window.partitionBy(BAND, KEY)
    usable = (
        matched.withColumn("__size", F.count("*").over(bucket))
        .withColumn("__hub", F.min(SEQ).over(bucket))
        .where((F.col("__size") <= hot_bucket_size) | (F.col(SEQ) == F.col("__hub")))
    )
    pairs = new_keys.join(usable.select(BAND, KEY, SEQ), [BAND, KEY]).select(DOC_ID, SEQ)
    cross = pairs.distinct().transform(cut)
    indexed = reader.documents_of(cross.select(SEQ).distinct())
    theirs = indexed.select(
        SEQ,
        F.col(DOC_ID).alias(INDEXED_ID),
        F.col(EXACT_KEY).alias("__their_key"),
        F.col(value).alias("__theirs"),
    )
    mine = new_docs.select(DOC_ID, F.col(EXACT_KEY).alias("__my_key"), F.col(value).alias("__mine"))
    joined = cross.join(theirs, SEQ).join(mine, DOC_ID)
    same = F.col("__my_key") == F.col("__their_key")
    if manifest.kind == "simhash":
        scored = joined.withColumn(DISTANCE, hamming(F.col("__mine"), F.col("__theirs")))
        kept = scored.where(F.col(DISTANCE) <= max_distance)
        score = DISTANCE
    else:
        empty = F.forall(F.col("__mine"), lambda x: x == F.lit(-1)) | F.forall(
            F.col("__theirs"), lambda x: x == F.lit(-1)
        )
        estimate = estimated_jaccard(F.col("__mine"), F.col("__theirs")).cast("double")
        similarity = F.when(same, F.lit(1.0)).when(empty, F.lit(0.0)).otherwise(estimate)
        scored = joined.withColumn(SIMILARITY, similarity)
        kept = scored.where(F.col(SIMILARITY) >= threshold)
        score = SIMILARITY
    return kept.select(DOC_ID, INDEXED_ID, SEQ, score)


def _grouped_candidates(reader: IndexReader, query_keys: DataFrame, depth: int) -> DataFrame:
    """``query_id, seq, doc_id, <value>``: indexed documents sharing a key at ``depth``."""
    value = value_col(reader.manifest.kind)
    hits = query_keys.join(reader.keys(depth), [BAND, KEY]).select("query_id", SEQ).distinct()
    hits = hits.transform(cut)  # read twice: for the documents, and joined with them
    docs = reader.documents_of(hits.select(SEQ).distinct())
    return hits.join(docs.select(SEQ, DOC_ID, value), SEQ)


def query_near(reader: IndexReader, queries: DataFrame, max_distance: int) -> DataFrame:
    """``query_id, rank, doc_id, distance``: for every query (``query_id, fingerprint``),
    ditto ``Index.Near`` over the index (``max_distance`` clamped down to the index's)."""
    index_distance = int(reader.manifest.shape["k"])  # the manifest's name for max_distance
    keys = simhash_table_keys(F.col(FINGERPRINT), scheme_of(reader.manifest))
    blocks = queries.select("query_id", F.posexplode(keys).alias(BAND, KEY))
    cands = _grouped_candidates(reader, blocks, 1)
    withq = cands.join(queries.select("query_id", F.col(FINGERPRINT).alias("__query")), "query_id")

    def rank(df: pd.DataFrame) -> pd.DataFrame:
        matches = near_ranked(
            int(df["__query"].iloc[0]),
            max_distance,
            index_distance,
            df[DOC_ID].tolist(),
            df[FINGERPRINT].tolist(),
            df[SEQ].tolist(),
        )
        ranks = list(range(1, len(matches) + 1))
        frame = _frame(df["query_id"].iloc[0], ranks, [m.id for m in matches], [0.0] * len(ranks))
        frame[SIMILARITY] = pd.Series([m.distance for m in matches], dtype="int32")
        return frame.rename(columns={SIMILARITY: DISTANCE}).drop(columns="settled")

    schema = f"query_id string, rank int, {DOC_ID} string, {DISTANCE} int"
    return withq.groupBy("query_id").applyInPandas(rank, schema)


def query_similar(
    reader: IndexReader, queries: DataFrame, n: int, keep: Callable[[DataFrame], DataFrame]
) -> DataFrame:
    """``query_id, rank, doc_id, similarity``: for every query (``query_id, signature``),
    semblance ``Forest.query(signature, n)`` with trees x depth = the index's bands x rows.

    Notes:
        One key lookup per prefix depth, from rows down to 1; a query leaves the loop as
        soon as its result is settled (``similar_ranked``), so most need one or two.
    """
    trees, depth = int(reader.manifest.shape["bands"]), int(reader.manifest.shape["rows"])
    prefix_keys = keep(
        queries.select(
            "query_id",
            F.posexplode(prefix_keys_udf(trees, depth)(F.col(SIGNATURE))).alias("pos", KEY),
        ).select(
            "query_id",
            (F.col("pos") / depth).cast("int").alias(BAND),
            (F.col("pos") % depth + 1).cast("int").alias(DEPTH),
            KEY,
        )
    )
    sigs = queries.select("query_id", F.col(SIGNATURE).alias("__query"))
    schema = f"query_id string, rank int, {DOC_ID} string, {SIMILARITY} double, settled boolean"
    results: list[DataFrame] = []
    active = queries.select("query_id")
    for level in range(depth, 0, -1):
        keys = prefix_keys.where(F.col(DEPTH) == level).join(active, "query_id", "left_semi")
        cands = _grouped_candidates(reader, keys.select("query_id", BAND, KEY), level)
        # queries without any candidate still need a row: level 1 settles them as empty
        withq = sigs.join(active, "query_id", "left_semi").join(cands, "query_id", "left")

        ranker = _similar_ranker(n, trees, depth, level)
        # checkpointed: each level's plan starts from the previous level's rows, not its plan
        out = withq.groupBy("query_id").applyInPandas(ranker, schema).transform(cut)
        results.append(out.where(F.col("settled") & (F.col("rank") > 0)))
        active = out.where(~F.col("settled")).select("query_id")
        if active.count() == 0:
            break
    final = results[0]
    for r in results[1:]:
        final = final.unionByName(r)
    return final.drop("settled")


def _frame(
    qid: str, ranks: list[int], ids: list[str | None], scores: list[float], settled: bool = True
) -> pd.DataFrame:
    """A ranker's rows with explicit dtypes (an empty result must still convert to Arrow)."""
    n = len(ranks)
    return pd.DataFrame(
        {
            "query_id": pd.Series([qid] * n, dtype=object),
            "rank": pd.Series(ranks, dtype="int32"),
            DOC_ID: pd.Series(ids, dtype=object),
            SIMILARITY: pd.Series(scores, dtype="float64"),
            "settled": pd.Series([settled] * n, dtype=bool),
        }
    )


def _similar_ranker(
    n: int, trees: int, depth: int, level: int
) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """One query's candidates at ``level`` -> its ranked rows, or one unsettled row."""

    def rank(df: pd.DataFrame) -> pd.DataFrame:
        qid = df["query_id"].iloc[0]
        have = df[df[SEQ].notna()]
        sigs = np.array(
            [np.asarray(s, dtype=np.int64) for s in have[SIGNATURE]], dtype=np.int64
        ).reshape(len(have), trees * depth)
        ranked = similar_ranked(
            np.asarray(df["__query"].iloc[0], dtype=np.int64).view(np.uint64),
            n,
            trees,
            depth,
            level,
            have[DOC_ID].tolist(),
            sigs.view(np.uint64),
            have[SEQ].astype("int64").tolist(),
        )
        if ranked is None:
            return _frame(qid, [0], [None], [0.0], settled=False)
        return _frame(
            qid, [r.rank for r in ranked], [r.id for r in ranked], [r.jaccard for r in ranked]
        )

    return rank
