"""The dedup run without Spark (config key ``engine``: ``local``): local JSON-lines files
read with Arrow (``driver.read``), the near-duplicate core in this process
(``driver.near``), the outputs and the report written through the local filesystem
(``driver.outputs``, ``io.storage.LocalStorage``), the same rows as a Spark run of the same
config writes.

The job takes this path before it starts a Spark session (``runtime.job_main``) when
:func:`local_refusal` finds nothing against it; an input only Spark's reader reads as the
job promises is :class:`driver.read.Declined` before anything is written, and the job then
runs on Spark.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.config import OUTPUTS, DedupConfig
from neardup_udfs.driver.near import near_on_driver
from neardup_udfs.driver.outputs import sample_table, score_summary_of, shown_table, write_parquet
from neardup_udfs.driver.read import Declined, read_jsonl
from neardup_udfs.io.outputs import claim_output
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import LocalStorage, StorageError, join
from neardup_udfs.report import MEMBERS_SHOWN
from neardup_udfs.runs.dedup import (
    DRIVER_BYTES_PER_DOC,
    DRIVER_PATH,
    DRIVER_TEXT_COPIES,
    Summary,
    check_accounted,
    near_settings,
    take_counts,
    write_dedup_report,
)
from neardup_udfs.runtime import StageClock
from neardup_udfs.schemas import BAND, DISTANCE, DOC_ID, IS_REPRESENTATIVE, SIMILARITY, TEXT
from neardup_udfs.session import driver_cores, local_byte_budget, submitted_conf

__all__ = ["local_refusal", "run_local", "try_local"]

log = logging.getLogger("neardup.dedup")

_LOCAL_MASTERS = ("local", "local[")


def local_refusal(config: DedupConfig, conf: Mapping[str, str]) -> str | None:
    """Why ``config`` cannot run on the ``local`` engine in a job started with Spark
    properties ``conf`` (``session.submitted_conf``); None when it can be tried.

    Notes:
        It can when the engine is ``auto`` or ``local``, clustering is anchored, there is no
        ``against``, the input is JSON lines, the master is ``local`` / ``local[N]``, and the
        input, the output and the checkpoint directory are on the local filesystem (a path
        without a scheme counts only where no Hadoop configuration could make another
        filesystem the default).
    """
    if config.engine not in ("auto", "local"):
        return f"config key engine = {config.engine!r}"
    if config.clustering != "anchored":
        return "connected clustering runs on Spark stages"
    if config.against:
        return "matching an index (against) runs on Spark stages"
    if config.input_format != "jsonl":
        return f"input format {config.input_format!r} is read by Spark"
    master = conf.get("spark.master", "local[*]")
    if master != "local" and not master.startswith("local["):
        return f"the master is {master!r}, not local"
    default_fs = conf.get("spark.hadoop.fs.defaultFS", "")
    hadoop_conf = os.environ.get("HADOOP_CONF_DIR") or os.environ.get("YARN_CONF_DIR")
    for key in ("input", "output", "checkpoint_dir"):
        path = getattr(config, key)
        if not path:
            continue
        if "://" in path and not path.startswith("file:"):
            return f"{key} {path!r} is not on the local filesystem"
        if not path.startswith("file:") and (
            (default_fs and not default_fs.startswith("file:")) or hadoop_conf
        ):
            return f"{key} {path!r} names the default filesystem, which Hadoop's configuration sets"
    if any(k.startswith("spark.hadoop.fs.") and k != "spark.hadoop.fs.defaultFS" for k in conf):
        return "the job sets Hadoop filesystem properties"
    return None


def run_local(config: DedupConfig, conf: Mapping[str, str]) -> Summary:
    """``runs.dedup.run`` of ``config`` without Spark: the same outputs, report and manifest
    (report.json ``engine``: ``local``; ``spark``: no jobs), or :class:`Declined` before
    anything is written when the input needs Spark's reader or does not fit the budget
    (``session.local_byte_budget`` of ``conf``: the need is the driver engine's rule).

    Notes:
        Raises LostRecords (and writes no manifest) unless every input row is kept, removed
        as a duplicate of a kept row, or rejected.
    """
    pipeline = config.pipeline()
    clock = StageClock(log)
    summary = Summary(pipeline=pipeline.id, seconds=clock.seconds)
    store = LocalStorage()
    budget, source = local_byte_budget(conf)
    try:
        claim = claim_output(
            store, config.output, job="dedup", names=OUTPUTS, inputs=[("input", config.input)]
        )
    except StorageError as e:
        raise InputError(f"output {config.output!r}: {e}") from None
    try:
        with clock.stage("read") as rows:
            read = read_jsonl(
                config.input,
                config.id_col,
                config.text_col,
                config.max_text_bytes,
                config.order_col,
                store=store,
                max_file_bytes=budget // DRIVER_TEXT_COPIES,
            )
            need = DRIVER_TEXT_COPIES * read.text_bytes + DRIVER_BYTES_PER_DOC * read.n_good
            if need > budget:
                raise Declined(f"the accepted texts need {need} bytes, over the budget {budget}")
            summary.input, summary.rejected = read.rows, read.n_rejected
            summary.input_stats = read.stats
            rows.rows_in, rows.rows_out = read.rows, read.n_good
        engine = {
            "engine": "local",
            "why": "a local-mode job on local JSON lines that fit the driver's budget",
            "need_bytes": need,
            "driver_budget_bytes": budget,
            "budget_from": source,
        }
        good = read.good
        texts = good.select([DOC_ID, TEXT])
        order = good.column(config.order_col) if config.order_col else None
        settings = near_settings(config, pipeline)
        found = near_on_driver(texts, pipeline, settings, order=order, clock=clock,
                               workers=driver_cores(conf))  # fmt: skip
        take_counts(summary, found.counts)
        clusters, pairs = found.clusters, found.pairs.drop_columns([BAND])
        check_accounted(summary, clusters.num_rows, read.n_good)
        with clock.stage("write"):
            samples = sample_table(clusters, texts)
            _write_outputs(store, config, read.text_col, good, clusters, pairs, read.rejects,
                           samples)  # fmt: skip
        with clock.stage("report"):
            metric = SIMILARITY if SIMILARITY in pairs.column_names else DISTANCE
            values = pairs.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
            scores = score_summary_of(values, metric, "verified pairs")
            shown = shown_table(samples, MEMBERS_SHOWN) if "samples" in config.outputs else None
        write_dedup_report(
            store,
            config,
            summary,
            settings,
            shown=shown,
            histogram=found.histogram,
            engine=engine,
            cluster=DRIVER_PATH,
            bands=found.bands,
            hot=found.hot,
            scores=scores,
            spark={"jobs": 0, "session": "none: the local engine ran"},
        )
    finally:
        claim.release()
    return summary


def _write_outputs(
    store: LocalStorage,
    config: DedupConfig,
    text_col: str,
    good: pa.Table,
    clusters: pa.Table,
    pairs: pa.Table,
    rejects: pa.Table,
    samples: pa.Table,
) -> None:
    """``runs.dedup``'s outputs: the wanted folders, after every folder the job can write is
    removed (the claim proved each present one the job's own)."""
    docs = good.drop_columns([TEXT]) if text_col != TEXT else good
    docs = docs.select([DOC_ID, *(c for c in docs.column_names if c != DOC_ID)])  # a join key
    reps = clusters.filter(clusters.column(IS_REPRESENTATIVE)).column(DOC_ID)
    frames: dict[str, Any] = {
        "docs": docs.filter(pc.is_in(docs.column(DOC_ID), reps)),
        "clusters": clusters,
        "pairs": pairs,
        "rejects": rejects,
        "samples": samples,
    }
    for name in OUTPUTS:
        store.delete(join(config.output, name))
    for name in config.outputs:
        write_parquet(store, join(config.output, name), frames[name])


def try_local(config: DedupConfig) -> Summary | None:
    """The job's first try (``runtime.job_main``, before any Spark session): ``config`` run
    on the ``local`` engine, or None, logged with the reason, when it cannot run there and
    ``engine`` is ``auto`` (InputError naming the reason when it is ``local``). A process
    that already holds a Spark session keeps using it unless ``engine`` is ``local``."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None and config.engine != "local":
        return None
    conf = dict(active.getConf().getAll()) if active is not None else submitted_conf()
    why = local_refusal(config, conf)
    if why is None:
        try:
            return run_local(config, conf)
        except Declined as e:
            why = str(e)
    if config.engine == "local":
        raise InputError(f"engine 'local' cannot run this job: {why}")
    log.info("engine local declined (%s): the job runs on Spark", why)
    return None
