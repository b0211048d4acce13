"""neardup as a PySpark library: deduplicate the DataFrame you hold, on a classic or a Spark
Connect session, and get DataFrames back.

The dedup job (``jobs/dedup.py``) is a shell over the same run: it reads its files into the
checked rows this module builds from a DataFrame, and both go through
``runs.dedup.deduplicate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self, TypeVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs import settings as settings_module
from neardup_udfs.clock import StageClock
from neardup_udfs.config import DedupConfig, ImagesConfig
from neardup_udfs.engine import library_refusal
from neardup_udfs.index import store as index_store
from neardup_udfs.index.store import IndexStoreError
from neardup_udfs.io.frames import check_batch, check_columns, check_image_columns
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.report_files import report_of
from neardup_udfs.io.storage import ArrowStorage, HadoopStorage, Storage, StorageError
from neardup_udfs.runs import images as images_run
from neardup_udfs.runs.dedup import (
    checked_frame,
    dedup_report,
    deduplicate,
    log,
    open_against,
    update_index,
    verified_scores,
)
from neardup_udfs.runs.summary import Summary
from neardup_udfs.runtime import Cache, cached_run
from neardup_udfs.schemas import (
    CLUSTER_ID,
    DISTANCE,
    DOC_ID,
    IS_REPRESENTATIVE,
    SIMILARITY,
)
from neardup_udfs.session import is_connect
from neardup_udfs.settings import ConfigError
from neardup_udfs.stages import images as image_stages
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.index import IndexReader, query_near, query_similar
from neardup_udfs.stages.normalize import prepare

C = TypeVar("C")

__all__ = [
    "FRAME_KEYS",
    "IMAGE_FRAME_KEYS",
    "DedupResult",
    "Held",
    "ImagesResult",
    "QueryResult",
    "dedup",
    "dedup_images",
    "query_index",
]

FRAME_KEYS = {
    "input": "dedup() reads the DataFrame it is given",
    "output": "dedup() returns DataFrames: write them with DataFrame.write",
    "input_format": "dedup() reads the DataFrame it is given",
    "id_col": "pass id_col= as an argument",
    "text_col": "pass text_col= as an argument",
    "html_extractor": "applies to WARC files (the dedup job)",
    "warc_content_types": "applies to WARC files (the dedup job)",
    "allow_empty_input": "an empty DataFrame gives an empty result",
    "outputs": "pass pairs=True for the verified pairs; every other frame is always returned",
}
"""Keys of the dedup job's config that name files or outputs, and what ``dedup`` does instead."""

IMAGE_FRAME_KEYS = {
    "input": "dedup_images() reads the DataFrame it is given",
    "output": "dedup_images() returns DataFrames: write them with DataFrame.write",
    "input_format": "dedup_images() reads the DataFrame it is given",
    "warc_content_types": "applies to WARC files (the images job)",
    "outputs": "pass pairs=True for the verified pairs; every other frame is always returned",
}
"""Keys of the images job's config that name files or outputs."""


@dataclass
class Held:
    """Frames a library call computed from frames it keeps persisted until :meth:`release`
    (or the end of a ``with`` block); use them before that."""

    _cache: Cache = field(repr=False)

    def release(self) -> None:
        """Unpersist every frame the call kept; its frames must not be used after."""
        self._cache.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class DedupResult(Held):
    """What :func:`dedup` found. Its frames are computed from frames the run keeps persisted
    until :meth:`release` (or the end of a ``with`` block); use them before that.

    ``kept``: the input rows kept, with the input's own columns (one row per accepted id).
    ``clusters``: ``doc_id`` (the id as a string), ``cluster_id`` (the representative's
    id), ``is_representative``, ``similarity`` (MinHash) or ``distance`` (SimHash) to the
    representative: one row per accepted input row, as the job's ``clusters/``.
    ``removed``: ``doc_id``, ``representative``, and ``similarity`` or ``distance``: each
    removed row and the one kept in its place.
    ``pairs``: ``a``, ``b``, and ``similarity`` or ``distance``: the verified pairs
    (``dedup(..., pairs=True)``), else None.
    ``rejects``: ``doc_id``, ``reason``: the rows that could not be deduplicated (a null id,
    a null or oversized text, a repeated id).
    ``matches``: with ``against``, the rows removed as near an indexed document
    (``doc_id``, ``indexed_id``, ``indexed_batch``, ``similarity`` or ``distance``), else
    None.
    ``counts``: input = kept + removed + rejected, and the run's other counts.
    ``report``: what the dedup job's report.json says of the same run.
    """

    kept: DataFrame
    clusters: DataFrame
    removed: DataFrame
    pairs: DataFrame | None
    rejects: DataFrame
    matches: DataFrame | None
    counts: dict[str, int]
    report: dict[str, Any]


def dedup(
    df: DataFrame,
    id_col: str = "id",
    text_col: str = "text",
    *,
    pairs: bool = False,
    **settings: Any,
) -> DedupResult:
    """Near-duplicate rows of ``df`` removed: the same run, rows and report as the dedup
    job on the same records, on a classic or a Spark Connect session.

    ``settings`` are the dedup job's config keys (``threshold``, ``method``,
    ``representative``, ``order_col``, ``engine``, ...; see docs/configuration.md), except
    those that name files (:data:`FRAME_KEYS`). ``pairs``: also return the verified pairs.

    ``against`` (an index directory) also removes rows near an indexed document (listed in
    ``matches``); on Spark Connect the client reads the index's manifest through pyarrow's
    filesystem of that path, and ``update_index`` needs a classic session.

    The run is eager: it reads ``df`` once (persisted), counts every row into kept, removed
    or rejected, and raises ``LostRecords`` if they do not add up. Its frames stay persisted
    until ``result.release()`` or the end of ``with dedup(...) as result:``. The session
    settings the run fits (shuffle partitions, adaptive execution, job group) are as before
    when it returns or raises.

    Raises:
        ConfigError: an unknown or invalid setting, or a key that names files (the message
            names it); before any Spark job runs.
        InputError: ``df`` is a streaming DataFrame (call ``dedup`` on each micro-batch,
            through ``foreachBatch``), ``id_col``, ``text_col`` or ``order_col`` is not a
            column of ``df``, the text column is not a string column, the id column is not
            a plain value, or ``df`` has a column the run reserves; before any Spark job
            runs.
    """
    check_batch(df, "dedup")
    config = frame_config(settings)
    check_columns(df, id_col, text_col, config.order_col)
    spark = df.sparkSession
    if config.update_index and is_connect(spark):
        raise ConfigError(
            "update_index: growing an index needs a classic session (its batch is committed "
            "through Hadoop's FileSystem); on Spark Connect, match it (against) and add the "
            "kept rows with the index job"
        )
    return cached_run(
        spark,
        "neardup dedup (DataFrame)",
        config.checkpoint_dir,
        lambda run: _dedup(spark, df, id_col, text_col, config, run, pairs),
        hold=True,
    )


def frame_config(settings: dict[str, Any]) -> DedupConfig:
    """The dedup config of ``dedup``'s ``settings``; ConfigError naming a key that names
    files, an unknown key or an invalid value."""
    if settings.get("update_index") and not settings.get("batch_id"):
        raise ConfigError("batch_id: update_index from dedup(df) needs the batch's id in the index")
    refused = library_refusal(settings.get("engine"))
    if refused is not None:
        raise ConfigError(refused)
    return _frame_config(DedupConfig, settings, FRAME_KEYS, "dedup")


def _removed(clusters: DataFrame, id_col: str, metric: str) -> DataFrame:
    """Each removed row of ``clusters``: its id, ``representative`` and ``metric``."""
    removed = clusters.where(~F.col(IS_REPRESENTATIVE))
    return removed.select(id_col, F.col(CLUSTER_ID).alias("representative"), metric)


def _frame_config(cls: type[C], settings: dict[str, Any], refused: dict[str, str], api: str) -> C:
    """The config ``cls`` of a library call's ``settings``; ConfigError naming a key of
    ``refused`` (keys that name files: why ``api`` takes none), an unknown key or an
    invalid value."""
    for key in settings:
        if key in refused:
            raise ConfigError(f"{key}: not a setting of {api}(df): {refused[key]}")
    return settings_module.load(cls, None, input="<DataFrame>", output="-", **settings)


def _index_store(spark: SparkSession, path: str | None) -> Storage:
    """Where an index's manifest and batch listing are read: Hadoop's FileSystem on a
    classic session; on Spark Connect (no JVM in this process) pyarrow's filesystem of
    ``path``, which the client must reach; the index's rows are read by Spark either way."""
    return ArrowStorage(path or "") if is_connect(spark) else HadoopStorage(spark)


def _dedup(
    spark: SparkSession,
    df: DataFrame,
    id_col: str,
    text_col: str,
    config: DedupConfig,
    run: Any,
    want_pairs: bool,
) -> DedupResult:
    clock = StageClock(log)
    summary = Summary(pipeline=config.run_id(), seconds=clock.seconds)
    try:
        against = (
            open_against(config, _index_store(spark, config.against)) if config.against else None
        )
    except (IndexStoreError, StorageError) as e:
        raise InputError(str(e)) from None
    with clock.stage("read") as rows:
        read = checked_frame(spark, df, id_col, text_col, config.max_text_bytes, run.cache)
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = summary.input, read.n_good
    done = deduplicate(spark, config, read, run, clock, summary, against)
    with clock.stage("report"):
        scores = verified_scores(done.pairs)
    index = None
    if against is not None:
        index = update_index(config, against, done, summary, clock, run.cache.keep)
    spark_report = run.spark_report(spark, read.partitions)
    report = report_of(**dedup_report(config, summary, done, scores=scores, spark=spark_report,
                                      index=index))  # fmt: skip
    kept = done.docs if id_col == DOC_ID else done.docs.drop(DOC_ID)
    metric = SIMILARITY if SIMILARITY in done.clusters.columns else DISTANCE
    return DedupResult(
        kept=kept,
        clusters=done.clusters,
        removed=_removed(done.clusters, DOC_ID, metric),
        pairs=done.pairs if want_pairs else None,
        rejects=done.rejects,
        matches=done.matches,
        counts=dict(report["counts"]),
        report=report,
        _cache=run.cache,
    )


@dataclass
class ImagesResult(DedupResult):
    """What :func:`dedup_images` found: :class:`DedupResult`'s frames with ``path`` (the
    image's id, as a string) in place of ``doc_id`` and ``distance`` (bits) as the score,
    plus ``hashes``: ``path``, ``phash`` (16 hex digits), ``width``, ``height``,
    ``format``, ``animated``, ``go_reference``, ``url`` (null), ``pipeline``. ``matches``
    is always None."""

    hashes: DataFrame


def dedup_images(
    df: DataFrame,
    path_col: str = "path",
    content_col: str = "content",
    *,
    pairs: bool = False,
    **settings: Any,
) -> ImagesResult:
    """Near-duplicate images of ``df`` (encoded bytes in ``content_col``, ids in
    ``path_col``) clustered by pHash: the same rows and report as the images job on the
    same images, on a classic or a Spark Connect session.

    ``settings`` are the images job's config keys (``max_distance``, ``representative``,
    ``max_pixels``, ``max_bytes``, ...) except those that name files
    (:data:`IMAGE_FRAME_KEYS`). A row with a null id, null content, content over
    ``max_bytes`` or bytes that are not an image is a reject; an id given twice keeps one
    row. Eager, held and released as :func:`dedup` is.

    Raises:
        ConfigError: an unknown or invalid setting, or a key that names files.
        InputError: ``df`` is a streaming DataFrame (as :func:`dedup`), ``path_col`` or
            ``content_col`` is not a column, or the content is not binary; before any Spark
            job runs.
    """
    check_batch(df, "dedup_images")
    config = _frame_config(ImagesConfig, settings, IMAGE_FRAME_KEYS, "dedup_images")
    check_image_columns(df, path_col, content_col)
    spark = df.sparkSession
    return cached_run(
        spark,
        "neardup images (DataFrame)",
        config.checkpoint_dir,
        lambda run: _dedup_images(spark, df, path_col, content_col, config, run, pairs),
        {"spark.sql.execution.arrow.maxRecordsPerBatch": str(config.batch_images)},
        hold=True,
    )


def _dedup_images(
    spark: SparkSession,
    df: DataFrame,
    path_col: str,
    content_col: str,
    config: ImagesConfig,
    run: Any,
    want_pairs: bool,
) -> ImagesResult:
    clock = StageClock(images_run.log)
    summary = images_run.Summary(pipeline=images_run.PIPELINE.id, seconds=clock.seconds)
    images = image_stages.images_of_frame(df, path_col, content_col, config.max_bytes)
    found = images_run.cluster_images(spark, config, images, run, clock, summary)
    with clock.stage("report"):
        scores = verified_scores(found.pairs)
    report = report_of(**images_run.images_report(config, summary, found, scores,
                                                   run.spark_report(spark)))  # fmt: skip
    path = image_stages.PATH
    reps = found.clusters.where(F.col(IS_REPRESENTATIVE)).select(F.col(path).alias("__path"))
    kept = df.join(reps, F.col(path_col).cast("string") == F.col("__path"), "left_semi")
    return ImagesResult(
        kept=kept,
        clusters=found.clusters,
        removed=_removed(found.clusters, path, DISTANCE),
        pairs=found.pairs if want_pairs else None,
        rejects=found.rejects,
        matches=None,
        counts=dict(report["counts"]),
        report=report,
        _cache=run.cache,
        hashes=found.hashes,
    )


@dataclass
class QueryResult(Held):
    """What :func:`query_index` found, held as :class:`DedupResult`'s frames are.

    ``results``: ``query_id`` (the row's id, as a string), ``rank`` (1 = nearest),
    ``doc_id`` (the indexed document) and ``distance`` (a SimHash index: every indexed
    document within the distance) or ``similarity`` (a MinHash index: the ``top`` most
    similar); the same rows as ``jobs/index.py query`` writes to ``results/``.
    ``rejects``: ``doc_id``, ``reason``: rows that could not be queried.
    ``counts``: ``input``, ``rejected``, ``queries``, ``results``, ``index_documents``.
    """

    results: DataFrame
    rejects: DataFrame
    counts: dict[str, int]


def query_index(
    df: DataFrame,
    index: str,
    id_col: str = "id",
    text_col: str = "text",
    *,
    top: int = 10,
    max_distance: int | None = None,
    max_text_bytes: int = 10_000_000,
) -> QueryResult:
    """Each row of ``df`` looked up in the index at ``index`` (built by ``jobs/index.py``):
    the index job's ``query`` on a DataFrame, on a classic or a Spark Connect session (on
    Connect the client reads the index's manifest through pyarrow's filesystem of
    ``index``; Spark reads its rows). ``top``: results per query of a MinHash index;
    ``max_distance``: a SimHash index's search distance (default and ceiling: the index's).

    Raises:
        InputError: a missing or damaged index, a streaming DataFrame or a bad column (as
            :func:`dedup`), before any Spark job runs.
    """
    check_batch(df, "query_index")
    check_columns(df, id_col, text_col)
    if top < 1 or (max_distance is not None and max_distance < 0) or max_text_bytes < 1:
        raise ConfigError("top and max_text_bytes must be positive, max_distance not negative")
    spark = df.sparkSession
    try:
        manifest = index_store.check_index(index, _index_store(spark, index))
    except (IndexStoreError, StorageError) as e:
        raise InputError(str(e)) from None
    pipeline = index_store.pipeline_of(manifest)
    limit = int(manifest.shape.get("k", 0)) if manifest.kind == "simhash" else 0
    distance = limit if max_distance is None else min(max_distance, limit)

    def body(run: Any) -> QueryResult:
        read = checked_frame(spark, df, id_col, text_col, max_text_bytes, run.cache)
        queries = sketch(prepare(read.good, pipeline), pipeline)
        reader = IndexReader(spark, index, manifest)
        results = (
            query_near(reader, queries.withColumnRenamed(DOC_ID, "query_id"), distance)
            if manifest.kind == "simhash"
            else query_similar(
                reader, queries.withColumnRenamed(DOC_ID, "query_id"), top, run.cache.keep
            )
        )
        results, n_results = run.cache.materialize(results)
        counts = {
            "input": read.rows,
            "rejected": read.n_rejected,
            "queries": read.n_good,
            "results": n_results,
            "index_documents": manifest.documents,
        }
        return QueryResult(_cache=run.cache, results=results, rejects=read.rejects, counts=counts)

    return cached_run(spark, f"neardup query {index} (DataFrame)", None, body, hold=True)
