"""The dedup run: read, normalize, exact duplicates, fingerprints, the shared near-duplicate
stages (``runs.near``), an index to match and grow, outputs and the report. The core
between the read and the outputs runs as Spark stages or, for an input the driver holds,
in the driver's own process (``driver.near``; config key ``engine``), with the same rows.

Writes under the config's output: docs/, clusters/, rejects/, samples/ (and pairs/ when
asked), report.json, report.html and _MANIFEST.json last (the success marker). With
``against``: documents near an indexed one are removed too and listed in matches/;
``update_index`` then appends the kept documents to the index.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs.clock import StageClock
from neardup_udfs.config import OUTPUTS, DedupConfig
from neardup_udfs.driver.near import near_on_driver
from neardup_udfs.driver.settings import NearSettings
from neardup_udfs.engine import core_engine, cores
from neardup_udfs.index import store as index_store
from neardup_udfs.index.store import IndexManifest, IndexStoreError
from neardup_udfs.io.frames import arrow_frame, check_columns
from neardup_udfs.io.outputs import check_directory
from neardup_udfs.io.readers import WARC_RECORD_ID, InputError
from neardup_udfs.io.report_files import write_report
from neardup_udfs.io.storage import HadoopStorage, Storage, join
from neardup_udfs.io.tables import check_output_tables, read_table, write_tables
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.presets import Pipeline
from neardup_udfs.report import MEMBERS_SHOWN, report_page
from neardup_udfs.runs.local import try_local
from neardup_udfs.runs.near import NearDuplicates
from neardup_udfs.runs.summary import (
    DRIVER_PATH,
    Summary,
    check_accounted,
    near_settings,
    report_extras,
    take_counts,
)
from neardup_udfs.runtime import Cache, RunScope, run_scoped
from neardup_udfs.schemas import (
    BAND,
    BAND_KEYS,
    DISTANCE,
    DOC_ID,
    EMPTY_TEXT,
    EXACT_KEY,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    JACCARD,
    LEADER,
    LENGTH,
    RELATION,
    SEQ,
    SIGNATURE,
    SIMILARITY,
    TEXT,
)
from neardup_udfs.session import conf_of, cut
from neardup_udfs.stages.exact import led
from neardup_udfs.stages.fingerprint import document_features
from neardup_udfs.stages.index import IndexReader, add_batch, match_index, value_col
from neardup_udfs.stages.read import Checked, check_rows, read_checked
from neardup_udfs.stages.samples import sample_clusters, shown_samples
from neardup_udfs.stages.summaries import score_summary

__all__ = [
    "Core",
    "checked_frame",
    "open_against",
    "run",
    "Deduplicated",
    "dedup_report",
    "deduplicate",
    "update_index",
    "verified_scores",
]

log = logging.getLogger("neardup.dedup")


def run(spark: SparkSession, config: DedupConfig) -> Summary:
    """Deduplicate ``config.input`` into ``config.output``; returns the counts.

    Notes:
        Raises LostRecords (and writes no manifest) unless every input row is kept, removed
        as a duplicate of a kept row, or rejected. Everything the run persists is released
        before it returns or raises. Under ``engine = "local"`` the session is not used
        (``runs.local``).
    """
    if config.engine == "local":
        done = try_local(config)
        assert done is not None  # engine local: a summary or an InputError
        return done
    try:
        return run_scoped(spark, "dedup", config, _run)
    except IndexStoreError as e:
        raise InputError(str(e)) from None


@dataclass(frozen=True)
class Against:
    """The index a run deduplicates against: the manifest to read (the batches before this
    run's own, when its batch id is already committed) and the one to add to."""

    reader_manifest: IndexManifest
    manifest: IndexManifest
    previous: IndexManifest | None


def open_against(config: DedupConfig, store: Storage) -> Against | None:
    if not config.against:
        return None
    pipeline, path = config.pipeline(), config.against
    check_directory(store, path, "against (the index)")
    if not index_store.exists(path, store):
        if not config.update_index:
            raise IndexStoreError(
                f"no index at {path!r}: build one (jobs/index.py build) or pass "
                "--update-index to start it with this run's documents"
            )
        empty = index_store.new_manifest(
            config.preset_name, pipeline, config.max_distance, config.hamming_scheme()
        )
        return Against(empty, empty, None)
    previous = index_store.check_index(path, store)  # a damaged index fails here, first
    index_store.check_compatible(
        previous, pipeline, config.max_distance, path, config.hamming_blocks
    )
    mine = previous.batch(config.index_batch_id) if config.update_index else None
    if mine is None:
        return Against(previous, previous, previous)
    # a rerun of a run that already added its batch: match against the index as it was
    earlier = tuple(b for b in previous.batches if b.number < mine.number)
    return Against(replace(previous, batches=earlier), previous, previous)


def _run(spark: SparkSession, config: DedupConfig, run: RunScope) -> Summary:
    clock = StageClock(log)
    summary = Summary(pipeline=config.run_id(), seconds=clock.seconds)
    store = HadoopStorage(spark)  # every file by name goes through Hadoop's FileSystem
    against = open_against(config, store)  # before any Spark work: a wrong index fails fast
    also = [("the index (against)", config.against)]
    claim_run_output(store, config, run, job="dedup", names=OUTPUTS, also=also)
    if config.output_table_prefix is not None:  # before any data is read
        check_output_tables(spark, config.output_table_prefix, OUTPUTS, job="dedup",
                            input_table=config.input_table)  # fmt: skip

    with clock.stage("read") as rows:
        if config.input_table:  # a table: read as the library reads a DataFrame
            table = read_table(spark, config.input_table)
            check_columns(table, config.id_col or "", config.text_col, config.order_col)
            read = checked_frame(spark, table, config.id_col or "", config.text_col,
                                 config.max_text_bytes, run.cache)  # fmt: skip
        else:
            read = read_checked(spark, config, run.cache)
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = summary.input, read.n_good

    done = deduplicate(spark, config, read, run, clock, summary, against)

    with clock.stage("write"):
        tables = _write_outputs(spark, store, config, done)

    with clock.stage("report"):  # the page's data: Spark aggregates, never a whole output
        scores = verified_scores(done.pairs)
        shown = None
        if "samples" in config.outputs:
            written = (
                spark.table(tables["samples"])
                if tables
                else spark.read.parquet(join(config.output, "samples"))
            )
            shown = shown_samples(written, MEMBERS_SHOWN).toArrow()

    index_report = None
    if against is not None:
        index_report = update_index(config, against, done, summary, clock, run.cache.keep)

    write_report(
        store,
        config.output,
        "dedup",
        pages=[report_page(shown)],
        **dedup_report(
            config, summary, done, scores=scores, spark=run.spark_report(spark, read.partitions),
            index=index_report,
            tables=tables,
        ),
    )  # fmt: skip
    return summary


@dataclass(frozen=True)
class Deduplicated:
    """A run's results as frames, before anything is written (:func:`deduplicate`)."""

    docs: DataFrame  # the kept accepted rows: every input column, plus doc_id
    clusters: DataFrame  # doc_id, cluster_id, is_representative, score (+ indexed_*)
    pairs: DataFrame  # a, b, score: the verified pairs
    rejects: DataFrame  # doc_id, reason
    samples: DataFrame  # the clusters' samples (samples/)
    matches: DataFrame | None  # against: leaders near an indexed document (matches/)
    core: Core
    engine: dict[str, Any]  # report.json "engine"
    settings: NearSettings


def deduplicate(
    spark: SparkSession,
    config: DedupConfig,
    read: Checked,
    run: RunScope,
    clock: StageClock,
    summary: Summary,
    against: Against | None = None,
) -> Deduplicated:
    """The dedup run between its read and its outputs, shared by the job and the library:
    from the checked input ``read``, the engine ``engine.core_engine`` picks
    finds the clusters; ``summary`` holds the counts.

    Raises:
        LostRecords: unless every accepted row has its cluster row and kept + removed +
            rejected = input (``summary.input`` and ``summary.rejected`` set by the caller).
    """
    pipeline = config.pipeline()
    good, n_good = read.good, read.n_good
    engine = core_engine(config, read.text_bytes, read.n_good, conf_of(spark))
    settings = near_settings(config, pipeline, against.previous if against else None)
    if engine["engine"] == "driver":
        with clock.stage("collect") as rows:
            collected = _collected(good, config)
            rows.rows_in = rows.rows_out = collected.num_rows
        core = _driver_core(spark, collected, pipeline, settings, clock, summary)
    else:
        core = _spark_core(spark, config, read, pipeline, settings, against, run, clock, summary)
    check_accounted(summary, core.rows, n_good)

    docs = good.drop(TEXT) if read.text_col != TEXT else good
    clusters = core.clusters
    if WARC_RECORD_ID in docs.columns:  # WARC read with --id-col: each record's own id too
        clusters = clusters.join(docs.select(DOC_ID, WARC_RECORD_ID), DOC_ID, "left")
    reps = core.clusters.where(F.col(IS_REPRESENTATIVE)).select(DOC_ID)
    matches = None if core.matches is None else _name_batches(spark, core.matches, against)
    return Deduplicated(
        docs=docs.join(reps, DOC_ID, "left_semi"),
        clusters=clusters,
        pairs=core.verified,
        rejects=read.rejects,
        samples=sample_clusters(core.clusters, good),
        matches=matches,
        core=core,
        engine=engine,
        settings=settings,
    )


def checked_frame(
    spark: SparkSession,
    df: DataFrame,
    id_col: str,
    text_col: str,
    max_text_bytes: int,
    cache: Cache,
) -> Checked:
    """The rows of ``df`` (columns checked by ``io.frames.check_columns``), their ids as
    strings, split into accepted rows and rejects (``stages.read.check_rows``): the read stage
    of the library's ``dedup(df)`` and ``query_index(df)`` and of the job's
    ``input_table``."""
    raw = df.withColumn(DOC_ID, F.col(id_col).cast("string"))
    return check_rows(spark, raw, text_col, max_text_bytes, cache)


def verified_scores(pairs: DataFrame) -> dict[str, Any]:
    """report.json ``scores``: the verified pairs' similarity (or distance) summary."""
    metric = SIMILARITY if SIMILARITY in pairs.columns else DISTANCE
    return dict(score_summary(pairs, metric, "verified pairs"))


def dedup_report(
    config: DedupConfig,
    summary: Summary,
    done: Deduplicated,
    *,
    scores: Mapping[str, Any],
    spark: Mapping[str, Any],
    index: Mapping[str, Any] | None = None,
    tables: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What report.json says of a dedup run on Spark (``io.report_files.report_of``'s keywords);
    ``tables``: output name -> the table written (``output_table_prefix``)."""
    core = done.core
    extras = report_extras(
        config,
        summary,
        done.settings,
        histogram=core.histogram,
        engine=done.engine,
        cluster=core.cluster_path,
        bands=core.bands,
        hot=core.hot,
        scores=scores,
        spark=spark,
        index=index,
    )
    return {**extras, **({"tables": dict(tables)} if tables else {})}


@dataclass(frozen=True)
class Core:
    """What the run's near-duplicate core hands to the outputs, whichever engine ran it."""

    clusters: DataFrame  # doc_id, cluster_id, is_representative, score (+ indexed_id)
    verified: DataFrame  # a, b, score: the verified pairs
    rows: int  # rows of clusters
    histogram: dict[int, int]  # cluster size -> clusters of that size
    bands: list[dict[str, Any]]  # band, candidates, verified
    hot: list[dict[str, Any]]  # the largest hot buckets
    cluster_path: dict[str, Any]  # report.json "cluster"
    members: DataFrame | None = None  # spark: doc_id, leader, exact_key, ... (the index needs)
    sketches: DataFrame | None = None  # spark: the leaders' sketches (the index needs them)
    matches: DataFrame | None = None  # against: leaders near an indexed document


def _collected(good: DataFrame, config: DedupConfig) -> Any:
    """The accepted rows' ``doc_id, text`` (and the order column) as one Arrow table."""
    cols = [DOC_ID, TEXT] + ([F.col(config.order_col).alias("__order")] if config.order_col else [])
    return good.select(*cols).toArrow()


def _driver_core(
    spark: SparkSession,
    table: Any,
    pipeline: Pipeline,
    settings: NearSettings,
    clock: StageClock,
    summary: Summary,
) -> Core:
    """The core in the driver's process (``driver.near``), its tables handed back to Spark."""
    order = table.column("__order") if "__order" in table.column_names else None
    found = near_on_driver(table, pipeline, settings, order=order, clock=clock,
                           workers=cores(conf_of(spark)))  # fmt: skip
    take_counts(summary, found.counts)
    clusters = arrow_frame(spark, found.clusters)
    verified = arrow_frame(spark, found.pairs.drop_columns([BAND]))
    return Core(
        clusters,
        verified,
        found.clusters.num_rows,
        found.histogram,
        found.bands,
        found.hot,
        DRIVER_PATH,
    )


def _spark_core(
    spark: SparkSession,
    config: DedupConfig,
    read: Checked,
    pipeline: Pipeline,
    settings: NearSettings,
    against: Against | None,
    run: RunScope,
    clock: StageClock,
    summary: Summary,
) -> Core:
    """The core as Spark stages: fingerprint, pairs, (against), cluster."""
    cache, good, n_good = run.cache, read.good, read.n_good
    with clock.stage("fingerprint") as rows:  # one pass over each text: keys and sketches
        value = FINGERPRINT if pipeline.kind == "simhash" else SIGNATURE
        sketched = [value] if value == FINGERPRINT else [value, BAND_KEYS]
        grouped = led(document_features(good, pipeline))
        # only a leader's sketch is ever read: the copies' are dropped before the persist
        is_leader = F.col(DOC_ID) == F.col(LEADER)
        leads = is_leader & ~F.col(EMPTY_TEXT)  # a leader with text: its group's sketch
        slim = [F.when(leads, F.col(c)).alias(c) if c in sketched else c for c in grouped.columns]
        members = cache.keep(grouped.select(*slim))
        tally = members.agg(
            F.sum(is_leader.cast("long")), F.sum(F.col(EMPTY_TEXT).cast("long"))
        ).collect()[0]
        n_leaders, summary.empty = int(tally[0] or 0), int(tally[1] or 0)
        summary.exact_duplicates = n_good - n_leaders
        n_sketched = n_leaders - summary.empty
        rows.rows_in, rows.rows_out = n_good, n_sketched
    keyed = members.where(leads).select(DOC_ID, *sketched)
    sketches = keyed.select(DOC_ID, value)

    near = NearDuplicates(
        keyed, n_sketched, pipeline, settings, cache=cache, clock=clock, counts=summary
    )
    verified = near.find(texts=good.select(DOC_ID, TEXT), prepared=False)

    matches, n_matched_pairs = None, 0
    if against is not None:
        with clock.stage("against") as rows:
            value = value_col(pipeline.kind)
            new_docs = sketches.join(members.select(DOC_ID, EXACT_KEY), DOC_ID)
            reader = IndexReader(spark, config.against or "", against.reader_manifest)
            found = match_index(
                reader,
                new_docs.select(DOC_ID, EXACT_KEY, value),
                max_distance=config.max_distance,
                threshold=config.jaccard_threshold,
                hot_bucket_size=config.hot_bucket_size,
            )
            # checkpointed, not persisted: later plans start from its rows (the lookup's
            # plan is wide, and Spark renders every plan that reads it as a string)
            matches = cut(found)
            n_matched_pairs = matches.count()
            rows.rows_in, rows.rows_out = n_sketched, n_matched_pairs

    bands = near.band_report()
    order = F.col(config.order_col) if config.order_col else F.lit(None)
    info = members.select(DOC_ID, LEADER, EXACT_KEY, F.col(LENGTH).alias("__length"))
    if config.order_col:
        info = info.join(good.select(DOC_ID, order.alias("__order")), DOC_ID)
    else:
        info = info.withColumn("__order", order)
    clustered = near.cluster(info, matches, documents=n_good, matched=n_matched_pairs)
    summary.index_matches = clustered.indexed
    if settings.containment is not None:
        texts = good.select(DOC_ID, TEXT)
        clustered, contained, decided = near.contain(clustered, texts, info)
        for key, n in decided.items():
            setattr(summary, key, n)
        jaccard = verified.withColumn(RELATION, F.lit(JACCARD))
        verified = jaccard.unionByName(contained)
    return Core(
        clustered.clusters,
        verified,
        clustered.rows,
        clustered.histogram,
        bands,
        near.hot,
        near.cluster_path,
        members,
        sketches,
        matches,
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


def update_index(
    config: DedupConfig,
    against: Against,
    done: Deduplicated,
    summary: Summary,
    clock: StageClock,
    keep: Callable[[DataFrame], DataFrame],
) -> dict[str, Any]:
    """Append the kept documents of ``done`` to the index (``update_index``); the report's
    index part."""
    core = done.core
    assert core.members is not None and core.sketches is not None  # the Spark core ran
    clusters, sketches = core.clusters, core.sketches
    members = core.members.select(DOC_ID, LEADER, EXACT_KEY)
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
    spark: SparkSession, store: Storage, config: DedupConfig, done: Deduplicated
) -> dict[str, str]:
    """The outputs as folders under ``config.output``, or as tables when
    ``output_table_prefix`` is set (returns output name -> table name then, else {})."""
    frames = {
        "docs": done.docs,
        "clusters": done.clusters,
        "pairs": done.pairs,
        "rejects": done.rejects,
        "samples": done.samples,
    }
    wanted = tuple(config.outputs)
    if done.matches is not None:
        frames["matches"] = done.matches
        wanted += () if "matches" in wanted else ("matches",)
    prefix = config.output_table_prefix
    if prefix is None:
        write_frames(store, config.output, frames, wanted, OUTPUTS)
        return {}
    write_frames(store, config.output, frames, (), OUTPUTS)  # no folder of an earlier run stays
    return write_tables(spark, prefix, frames, wanted, OUTPUTS, job="dedup")
