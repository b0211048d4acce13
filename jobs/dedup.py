"""spark-submit entry point: find and remove near-duplicate documents.

    spark-submit --properties-file conf/spark-local.conf jobs/dedup.py \\
        --input PATH --output DIR [--config conf/dedup.toml] [overrides]

Writes under DIR: docs/, clusters/, rejects/, samples/ (and pairs/ when asked),
report.json, report.html and _MANIFEST.json last (the success marker). With ``--against
INDEX``: documents near an indexed one are removed too and listed in matches/;
``--update-index`` then appends the kept documents to INDEX. See README "Dedup job", "Index".
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs import index_store
from neardup_udfs.config import OUTPUTS, DedupConfig, load_config
from neardup_udfs.index_store import IndexManifest, IndexStoreError
from neardup_udfs.io import InputError
from neardup_udfs.normalization import NORMALIZATIONS
from neardup_udfs.report_html import write_report_html
from neardup_udfs.runtime import (
    Cache,
    LostRecords,
    StageClock,
    add_input_arguments,
    begin_output,
    counts_of,
    job_main,
    read_checked,
    write_frames,
    write_report,
)
from neardup_udfs.schemas import (
    BAND,
    CLUSTER_ID,
    DOC_ID,
    EXACT_KEY,
    INDEXED_ID,
    IS_REPRESENTATIVE,
    LEADER,
    SEQ,
    TEXT,
)
from neardup_udfs.session import JobCount
from neardup_udfs.stages.candidates import (
    band_counts,
    band_keys,
    candidates,
    first_band_counts,
    scored_candidates,
)
from neardup_udfs.stages.cluster import CLUSTERINGS, cluster
from neardup_udfs.stages.exact import exact_groups
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.index import IndexReader, add_batch, match_index, value_col
from neardup_udfs.stages.normalize import is_empty, prepare
from neardup_udfs.stages.samples import sample_clusters
from neardup_udfs.stages.verify import verify

log = logging.getLogger("neardup.dedup")


@dataclass
class Summary:
    """What a run did; also the counts of report.json."""

    input: int = 0
    rejected: int = 0
    empty: int = 0  # no text left after normalization: kept, nobody's duplicate
    exact_duplicates: int = 0
    candidates: int = 0
    verified: int = 0
    clusters: int = 0  # clusters with at least two members
    kept: int = 0
    removed: int = 0
    chained: int = 0
    hot_buckets: int = 0
    rounds: int = 0
    driver_edges: int = 0  # anchored clustering: undecided edges finished on the driver
    index_matches: int = 0  # --against: documents removed as duplicates of indexed ones
    index_added: int = 0  # --update-index: documents appended to the index
    pipeline: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"


def run(spark: SparkSession, config: DedupConfig) -> Summary:
    """Deduplicate ``config.input`` into ``config.output``; returns the counts.

    Notes:
        Raises LostRecords (and writes no manifest) unless every input row is kept, removed
        as a duplicate of a kept row, or rejected. Everything the run persists is released
        before it returns or raises.
    """
    cache, jobs = Cache(), JobCount()
    jobs.start(spark, f"neardup dedup {config.input}")
    try:
        return _run(spark, config, cache, jobs)
    except IndexStoreError as e:
        raise InputError(str(e)) from None
    finally:
        cache.release()
        jobs.stop(spark)


@dataclass(frozen=True)
class Against:
    """The index a run deduplicates against: the manifest to read (the batches before this
    run's own, when its batch id is already committed) and the one to add to."""

    reader_manifest: IndexManifest
    manifest: IndexManifest
    previous: IndexManifest | None


def _open_against(config: DedupConfig) -> Against | None:
    if not config.against:
        return None
    pipeline, path = config.pipeline(), config.against
    if not index_store.exists(path):
        if not config.update_index:
            raise IndexStoreError(
                f"no index at {path!r}: build one (jobs/index.py build) or pass "
                "--update-index to start it with this run's documents"
            )
        empty = index_store.new_manifest(config.preset_name, pipeline, config.k)
        return Against(empty, empty, None)
    previous = index_store.open_index(path)
    index_store.check_compatible(previous, pipeline, config.k, path)
    mine = previous.batch(config.index_batch_id) if config.update_index else None
    if mine is None:
        return Against(previous, previous, previous)
    # a rerun of a run that already added its batch: match against the index as it was
    earlier = tuple(b for b in previous.batches if b.number < mine.number)
    return Against(replace(previous, batches=earlier), previous, previous)


def _run(spark: SparkSession, config: DedupConfig, cache: Cache, jobs: JobCount) -> Summary:
    _materialize = cache.materialize
    pipeline = config.pipeline()
    clock = StageClock(log)
    summary = Summary(pipeline=pipeline.id, seconds=clock.seconds)
    against = _open_against(config)  # before any Spark work: a wrong index fails fast
    begin_output(config.output)

    with clock.stage("read") as rows:
        read = read_checked(spark, config, cache)
        spark_report: dict[str, Any] = dict(read.partitions)
        good, n_good, rejects, text_col = read.good, read.n_good, read.rejects, read.text_col
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = summary.input, n_good

    prepared = prepare(good, pipeline)
    if pipeline.normalization.active:
        with clock.stage("normalize") as rows:
            prepared = cache.keep(prepared)  # one action computes and counts it
            empty = F.sum(is_empty(pipeline).cast("int"))
            summary.empty = int(prepared.agg(F.coalesce(empty, F.lit(0))).collect()[0][0])
            rows.rows_in, rows.rows_out = n_good, n_good - summary.empty

    with clock.stage("exact") as rows:
        members = cache.keep(exact_groups(prepared, pipeline))
        leader_ids = members.where(F.col(DOC_ID) == F.col(LEADER)).select(DOC_ID)
        leaders = prepared.join(leader_ids, DOC_ID, "left_semi").where(~is_empty(pipeline))
        summary.exact_duplicates = n_good - leader_ids.count()  # computes and counts members
        rows.rows_in, rows.rows_out = n_good, n_good - summary.exact_duplicates

    with clock.stage("fingerprint") as rows:
        sketches, n_sketched = _materialize(sketch(leaders, pipeline))
        rows.rows_in, rows.rows_out = n_good - summary.exact_duplicates, n_sketched

    with clock.stage("candidates") as rows:
        if pipeline.kind == "simhash":
            keys = band_keys(sketches, pipeline, config.k)
            cands = candidates(keys, config.hot_bucket_size, keep=cache.keep)
        else:  # every pair once, with its estimate
            cands = scored_candidates(sketches, pipeline, config.hot_bucket_size, cache.keep)
        pairs, summary.candidates = _materialize(cands.pairs)
        hot = cands.hot_buckets.orderBy(F.col("size").desc(), "band", "key").limit(100).collect()
        summary.hot_buckets = len(hot) if len(hot) < 100 else cands.hot_buckets.count()
        rows.rows_in, rows.rows_out = n_sketched, summary.candidates

    with clock.stage("verify") as rows:
        verified, summary.verified = _materialize(
            verify(
                pairs,
                sketches,
                pipeline,
                k=config.k,
                threshold=config.jaccard_threshold,
                verification=config.verification,
                texts=leaders,
                keep=cache.keep,
            )
        )
        rows.rows_in, rows.rows_out = summary.candidates, summary.verified

    matches = None
    if against is not None:
        with clock.stage("against") as rows:
            value = value_col(pipeline.kind)
            new_docs = sketches.join(members.select(DOC_ID, EXACT_KEY), DOC_ID)
            reader = IndexReader(spark, config.against or "", against.reader_manifest)
            found = match_index(
                reader,
                new_docs.select(DOC_ID, EXACT_KEY, value),
                k=config.k,
                threshold=config.jaccard_threshold,
                hot_bucket_size=config.hot_bucket_size,
            )
            # checkpointed, not persisted: later plans start from its rows (the lookup's
            # plan is wide, and Spark renders every plan that reads it as a string)
            matches = found.localCheckpoint()
            n_matched_pairs = matches.count()
            rows.rows_in, rows.rows_out = n_sketched, n_matched_pairs

    with clock.stage("bands"):  # for the report: pairs each band produced, and verified
        if BAND in verified.columns:  # MinHash: by the band that produced them first
            per_band = first_band_counts(pairs, verified)
            verified = verified.drop(BAND)
        else:
            per_band = band_counts(cands.buckets, verified, config.hot_bucket_size)
        bands = [r.asDict() for r in per_band.orderBy("band").collect()]  # <= bands rows

    with clock.stage("cluster") as rows:
        order = F.col(config.order_col) if config.order_col else F.lit(None)
        info = good.select(
            DOC_ID, F.octet_length(F.col(TEXT)).alias("__length"), order.alias("__order")
        )
        floor = config.chaining_floor
        if floor is None:
            floor = config.k if pipeline.kind == "simhash" else config.jaccard_threshold
        clustered = cluster(
            members.join(info, DOC_ID),
            verified,
            sketches,
            kind=pipeline.kind,
            rule=config.representative,
            clustering=config.clustering,
            max_rounds=config.max_rounds,
            max_driver_edges=config.max_driver_edges,
            floor=floor,
            no_chaining=config.no_chaining,
            matches=matches,
        )
        cache.frames.extend(clustered.persisted)
        clusters = cache.keep(clustered.clusters)
        tally = _cluster_tally(clusters)  # computes and counts clusters, in one Spark job
        n_clustered, summary.kept, summary.index_matches, histogram = tally
        summary.rounds, summary.driver_edges = clustered.rounds, clustered.driver_edges
        summary.chained = clustered.chained
        summary.removed = n_clustered - summary.kept
        summary.clusters = sum(n for size, n in histogram.items() if size > 1)
        rows.rows_in, rows.rows_out = summary.verified, summary.kept

    if n_clustered != n_good or summary.kept + summary.removed + summary.rejected != summary.input:
        raise LostRecords(
            f"input {summary.input}: kept {summary.kept} + removed {summary.removed} + "
            f"rejected {summary.rejected} != input (clustered {n_clustered} of {n_good})"
        )

    with clock.stage("write"):
        docs = good.drop(TEXT) if text_col != TEXT else good
        samples = sample_clusters(clusters, good)
        named = None if matches is None else _name_batches(spark, matches, against)
        _write_outputs(config, docs, clusters, verified, rejects, samples, named)

    index_report = None
    if against is not None:
        index_report = _update_index(
            config, against, (clusters, members, sketches), summary, clock, cache.keep
        )

    write_report(
        config.output,
        "dedup",
        counts=counts_of(summary),
        seconds=summary.seconds,
        pipeline=(pipeline.id, pipeline.version),
        config=config,
        pages=[write_report_html],
        input=summary.input_stats,
        cluster_size_histogram={str(k): v for k, v in histogram.items()},
        bands=bands,
        **({"index": index_report} if index_report is not None else {}),
        hot_buckets=[
            {"band": r["band"], "key": f"{r['key'] & (2**64 - 1):016x}", "size": r["size"]}
            for r in hot
        ],
        spark={**spark_report, "jobs": jobs.count(spark)},
    )
    return summary


def _cluster_tally(clusters: DataFrame) -> tuple[int, int, int, dict[int, int]]:
    """``rows, kept, indexed, histogram`` of the cluster stage's output: its rows, its
    representatives, its rows represented by an indexed document (0 without ``indexed_id``)
    and the number of clusters of each size."""
    indexed = F.col(INDEXED_ID).isNotNull() if INDEXED_ID in clusters.columns else F.lit(False)
    per_cluster = clusters.groupBy(CLUSTER_ID).agg(
        F.count(F.lit(1)).alias("size"),
        F.sum(F.col(IS_REPRESENTATIVE).cast("long")).alias("kept"),
        F.sum(indexed.cast("long")).alias("indexed"),
    )
    by_size = per_cluster.groupBy("size").agg(
        F.count(F.lit(1)).alias("n"), F.sum("kept").alias("kept"), F.sum("indexed").alias("indexed")
    )
    rows = by_size.collect()
    histogram = {int(r["size"]): int(r["n"]) for r in sorted(rows, key=lambda r: r["size"])}
    return (
        sum(int(r["size"]) * int(r["n"]) for r in rows),
        sum(int(r["kept"]) for r in rows),
        sum(int(r["indexed"]) for r in rows),
        histogram,
    )


def _name_batches(spark: SparkSession, matches: DataFrame, against: Against | None) -> DataFrame:
    """``matches`` with the indexed document's batch id (``indexed_batch``) instead of seq."""
    assert against is not None
    names = [(b.number, b.batch_id) for b in against.reader_manifest.batches]
    batches = spark.createDataFrame(names, "__number bigint, indexed_batch string")
    number = F.shiftright(F.col(SEQ), 32)
    return (
        matches.withColumn("__number", number)
        .join(F.broadcast(batches), "__number", "left")
        .drop("__number", SEQ)
    )


def _update_index(
    config: DedupConfig,
    against: Against,
    frames: tuple[DataFrame, DataFrame, DataFrame],
    summary: Summary,
    clock: StageClock,
    keep: Callable[[DataFrame], DataFrame],
) -> dict[str, Any]:
    """Append the kept documents to the index (``update_index``); the report's index part.
    ``frames``: the run's clusters, exact-duplicate members and sketches."""
    clusters, members, sketches = frames
    path = config.against or ""
    report: dict[str, Any] = {
        "path": path,
        "batches_matched": [b.batch_id for b in against.reader_manifest.batches],
        "indexed_documents": against.reader_manifest.documents,
        "matches": summary.index_matches,
    }
    if not config.update_index:
        return report
    with clock.stage("update-index") as rows:
        kept = clusters.where(F.col(IS_REPRESENTATIVE)).select(DOC_ID)
        values = sketches.withColumnRenamed(DOC_ID, LEADER)
        docs = kept.join(members, DOC_ID).join(values, LEADER).drop(LEADER)
        added = add_batch(
            path, against.manifest, against.previous, config.index_batch_id, docs, None, keep
        )
        summary.index_added = added.batch.documents if added.batch else 0
        rows.rows_in, rows.rows_out = summary.kept, summary.index_added
    report.update(
        batch_id=config.index_batch_id,
        added=summary.index_added,
        already_committed=added.batch is None,
        documents_after=added.manifest.documents,
    )
    return report


def _write_outputs(
    config: DedupConfig,
    docs: DataFrame,
    clusters: DataFrame,
    verified: DataFrame,
    rejects: DataFrame,
    samples: DataFrame,
    matches: DataFrame | None,
) -> None:
    reps = clusters.where(F.col(IS_REPRESENTATIVE)).select(DOC_ID)
    frames = {
        "docs": docs.join(reps, DOC_ID, "left_semi"),
        "clusters": clusters,
        "pairs": verified,
        "rejects": rejects,
        "samples": samples,
    }
    wanted = tuple(config.outputs)
    if matches is not None:
        frames["matches"] = matches
        wanted += () if "matches" in wanted else ("matches",)
    write_frames(config.output, frames, wanted, OUTPUTS)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dedup.py", description="Remove near-duplicate documents.")
    add_input_arguments(p, "conf/dedup.toml")
    p.add_argument(
        "--normalize",
        choices=NORMALIZATIONS,
        help="web (default): visible text of HTML, whitespace collapsed, CJK characters as tokens",
    )
    p.add_argument("--method", choices=("minhash", "simhash"))
    p.add_argument("--preset")
    p.add_argument("--threshold", type=float, help="MinHash: Jaccard threshold (default 0.7)")
    p.add_argument("--bands", type=int)
    p.add_argument("--rows", type=int)
    p.add_argument("-k", type=int, help="SimHash: max Hamming distance (default 3)")
    p.add_argument("--verification", choices=("hybrid", "exact", "estimate", "off"))
    p.add_argument("--representative", choices=("min_id", "earliest", "longest"))
    p.add_argument("--order-col", dest="order_col")
    p.add_argument("--hot-bucket-size", dest="hot_bucket_size", type=int)
    p.add_argument("--clustering", choices=CLUSTERINGS)
    p.add_argument("--max-rounds", dest="max_rounds", type=int)
    p.add_argument("--max-driver-edges", dest="max_driver_edges", type=int)
    p.add_argument("--chaining-floor", dest="chaining_floor", type=float)
    p.add_argument("--no-chaining", dest="no_chaining", action="store_true", default=None)
    p.add_argument("--against", help="an index directory: also remove duplicates of it")
    p.add_argument(
        "--update-index",
        dest="update_index",
        action="store_true",
        default=None,
        help="append the kept documents to the --against index (created if absent)",
    )
    p.add_argument("--batch-id", dest="batch_id", help="the batch's id in the index")
    return p


def format_summary(s: Summary) -> str:
    rows: list[tuple[str, Any]] = [
        ("pipeline", s.pipeline),
        ("input documents", s.input),
        ("rejected", s.rejected),
        ("empty (no visible text)", s.empty),
        ("exact duplicates", s.exact_duplicates),
        ("candidate pairs", s.candidates),
        ("verified pairs", s.verified),
        ("clusters (2+ members)", s.clusters),
        ("removed as duplicates", s.removed),
        ("kept", s.kept),
        ("chained members", s.chained),
        ("hot buckets", s.hot_buckets),
        ("matched the index", s.index_matches),
        ("added to the index", s.index_added),
        ("cluster rounds", s.rounds),
        ("finished on the driver", s.driver_edges),
        ("seconds", sum(s.seconds.values())),
    ]
    return "\n".join(
        f"{k:<24}{v:>12}" if not isinstance(v, float) else f"{k:<24}{v:>12.1f}" for k, v in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    return job_main(
        argv,
        prog="dedup.py",
        parser=build_parser(),
        load=load_config,
        run=run,
        describe=lambda c, s: f"{format_summary(s)}\n-> {c.output}",
    )


if __name__ == "__main__":
    sys.exit(main())
