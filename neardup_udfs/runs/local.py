"""The dedup run without Spark (config key ``engine``: ``local``): local JSON-lines files
read with Arrow (``driver.read``), the near-duplicate core in this process
(``driver.near``), the outputs and the report written through the local filesystem
(``driver.outputs``, ``io.storage.LocalStorage``), the same rows as a Spark run of the same
config writes.

The job takes this path before it starts a Spark session (``submit.job_main``) when
``engine.local_refusal`` finds nothing against it; an input only Spark's reader reads as the
job promises is :class:`driver.read.Declined` before anything is written, and the job then
runs on Spark.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.clock import StageClock
from neardup_udfs.config import OUTPUTS, DedupConfig
from neardup_udfs.driver.blocks import StreamedInput, read_streamed
from neardup_udfs.driver.near import ShingledTexts, near_of_sketches, near_on_driver
from neardup_udfs.driver.outputs import (
    sample_table,
    score_summary_of,
    shown_table,
    write_parquet,
    write_parquet_parts,
)
from neardup_udfs.driver.read import Declined, LocalInput, input_files, read_jsonl
from neardup_udfs.engine import (
    cores,
    held_need,
    local_byte_budget,
    local_entry,
    local_refusal,
    streamed_need,
    streamed_rows,
    submitted_conf,
)
from neardup_udfs.io.outputs import OutputClaim, claim_output
from neardup_udfs.io.reasons import InputError
from neardup_udfs.io.report_files import write_report
from neardup_udfs.io.scratch import scratch_parent
from neardup_udfs.io.storage import LocalStorage, StorageError, join
from neardup_udfs.report import MEMBERS_SHOWN, report_page
from neardup_udfs.runs.summary import (
    DRIVER_PATH,
    Summary,
    check_accounted,
    near_settings,
    report_extras,
    take_counts,
)
from neardup_udfs.schemas import BAND, DISTANCE, DOC_ID, IS_REPRESENTATIVE, SIMILARITY, TEXT

__all__ = ["run_local", "try_local"]

log = logging.getLogger("neardup.dedup")


def run_local(config: DedupConfig, conf: Mapping[str, str]) -> Summary:
    """``runs.dedup.run`` of ``config`` without Spark: the same outputs, report and manifest
    (report.json ``engine``: ``local``; ``spark``: no jobs), or :class:`Declined` before
    anything is written when the input needs Spark's reader or does not fit the budget
    (``engine.local_byte_budget`` of ``conf``). An input whose texts fit the budget by the
    driver engine's rule is held whole; a larger one is streamed (read a block at a time,
    only its sketches held: ``input`` ``streamed`` in report.json's ``engine``).

    Notes:
        Raises LostRecords (and writes no manifest) unless every input row is kept, removed
        as a duplicate of a kept row, or rejected.
    """
    pipeline = config.pipeline()
    clock = StageClock(log)
    summary = Summary(pipeline=config.run_id(), seconds=clock.seconds)
    store = LocalStorage()
    budget, source = local_byte_budget(conf)
    try:
        claim = claim_output(
            store, config.output, job="dedup", names=OUTPUTS, inputs=[("input", config.input)]
        )
    except StorageError as e:
        raise InputError(f"output {config.output!r}: {e}") from None
    settings = near_settings(config, pipeline)
    streamed = None
    try:
        held = _read_held(config, store, budget, clock, summary)
        if held is not None:
            texts, order = held.read.good.select([DOC_ID, TEXT]), held.order
            engine = local_entry("held", held.need, budget, source)
            found = near_on_driver(texts, pipeline, settings, order=order, clock=clock,
                                   workers=cores(conf))  # fmt: skip
            texts_of: Any = texts
            rejects, n_good, docs_tables = held.read.rejects, held.read.n_good, None
        else:
            streamed = _read_streamed(config, pipeline, conf, budget, clock, summary, claim)
            engine = local_entry("streamed", streamed.need, budget, source)
            engine["blocks"] = len(streamed.read.blocks)
            read = streamed.read
            sets = read.sets or ShingledTexts(read.texts(), pipeline, cores(conf))
            found = near_of_sketches(read.sketches, sets, pipeline, settings,
                                     order=read.order, clock=clock,
                                     workers=cores(conf))  # fmt: skip
            texts_of = _texts_by_id(read)
            rejects, n_good, docs_tables = read.rejects, read.n_good, read
        take_counts(summary, found.counts)
        clusters, pairs = found.clusters, found.pairs.drop_columns([BAND])
        check_accounted(summary, clusters.num_rows, n_good)
        with clock.stage("write"):
            samples = sample_table(clusters, texts_of)
            frames: dict[str, Any] = {"clusters": clusters, "pairs": pairs, "rejects": rejects,
                                      "samples": samples}  # fmt: skip
            if held is not None:
                frames["docs"] = _held_docs(held.read, clusters)
            _write_outputs(store, config, frames, docs_tables, clusters)
        with clock.stage("report"):
            metric = SIMILARITY if SIMILARITY in pairs.column_names else DISTANCE
            values = pairs.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
            scores = score_summary_of(values, metric, "verified pairs")
            shown = shown_table(samples, MEMBERS_SHOWN) if "samples" in config.outputs else None
        write_report(
            store,
            config.output,
            "dedup",
            pages=[report_page(shown)],
            **report_extras(
                config,
                summary,
                settings,
                histogram=found.histogram,
                engine=engine,
                cluster=DRIVER_PATH,
                bands=found.bands,
                hot=found.hot,
                scores=scores,
                spark={"jobs": 0, "session": "none: the local engine ran"},
            ),
        )
    finally:
        if streamed is not None:
            streamed.read.close()
        claim.release()
    return summary


@dataclass(frozen=True)
class _Held:
    read: LocalInput
    need: int
    order: pa.ChunkedArray | None


@dataclass(frozen=True)
class _Streamed:
    read: StreamedInput
    need: int


def _read_held(
    config: DedupConfig, store: LocalStorage, budget: int, clock: StageClock, summary: Summary
) -> _Held | None:
    """The input read whole, when its texts fit ``budget`` (``engine.held_need``); None when
    they do not."""
    files = input_files(store, config.input)
    if held_need(sum(f.length for f in files), 0) > budget:  # the files bound the texts
        return None
    with clock.stage("read") as rows:
        read = read_jsonl(config.input, config.id_col, config.text_col, config.max_text_bytes,
                          config.order_col, store=store)  # fmt: skip
        need = held_need(read.text_bytes, read.n_good)
        if need > budget:
            return None
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = read.rows, read.n_good
    order = read.good.column(config.order_col) if config.order_col else None
    return _Held(read, need, order)


def _read_streamed(
    config: DedupConfig,
    pipeline: Any,
    conf: Mapping[str, str],
    budget: int,
    clock: StageClock,
    summary: Summary,
    claim: OutputClaim,
) -> _Streamed:
    """The input read, checked and fingerprinted a block at a time, or :class:`Declined`
    when its documents do not fit ``budget`` even so; its scratch folder (under
    ``spark.local.dir``) is noted in ``claim``'s lock, so that the next run of the output
    removes it if this one is killed before it can."""
    with clock.stage("fingerprint") as rows:  # the streamed read fingerprints as it reads
        read = read_streamed(
            config.input,
            config.id_col,
            config.text_col,
            config.max_text_bytes,
            pipeline,
            order_col=config.order_col,
            workers=cores(conf),
            max_rows=streamed_rows(budget),
            sets=pipeline.kind == "minhash" and config.verification != "estimate",
            scratch_dir=scratch_parent(conf),
            claimed=claim.note_scratch,
        )
        need = streamed_need(read.n_good)
        if need > budget:
            raise Declined(f"the documents need {need} bytes streamed, over the budget {budget}")
        summary.input, summary.rejected = read.rows, read.n_rejected
        summary.input_stats = read.stats
        rows.rows_in, rows.rows_out = read.rows, read.n_good
    return _Streamed(read, need)


def _texts_by_id(read: StreamedInput) -> Any:
    """A function from accepted ids to their texts, read again from the input."""
    ids = read.sketches.table.column(DOC_ID).combine_chunks()
    source = read.texts()

    def texts_of(wanted: pa.Array) -> pa.Array:
        rows = pc.index_in(wanted, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)
        out: list[str | None] = [None] * len(rows)
        for which, chunk in source.chunks(rows):
            for j, text in zip(which.tolist(), chunk, strict=True):
                out[j] = text
        return pa.array(out, pa.string())

    return texts_of


def _docs_view(table: pa.Table, text_col: str) -> pa.Table:
    """The ``docs/`` columns of accepted rows: the input's, ``doc_id`` first (a join key),
    without the pipeline's ``text`` unless the input calls its text that."""
    docs = table.drop_columns([TEXT]) if text_col != TEXT else table
    return docs.select([DOC_ID, *(c for c in docs.column_names if c != DOC_ID)])


def _held_docs(read: LocalInput, clusters: pa.Table) -> pa.Table:
    docs = _docs_view(read.good, read.text_col)
    reps = clusters.filter(clusters.column(IS_REPRESENTATIVE)).column(DOC_ID)
    return docs.filter(pc.is_in(docs.column(DOC_ID), reps))


def _write_outputs(
    store: LocalStorage,
    config: DedupConfig,
    frames: dict[str, Any],
    streamed: StreamedInput | None,
    clusters: pa.Table,
) -> None:
    """``runs.dedup``'s outputs: the wanted folders, after every folder the job can write is
    removed (the claim proved each present one the job's own); a streamed input's
    ``docs/`` is written as its blocks are read again."""
    for name in OUTPUTS:
        store.delete(join(config.output, name))
    for name in config.outputs:
        folder = join(config.output, name)
        if name == "docs" and streamed is not None:
            keep = clusters.column(IS_REPRESENTATIVE).to_numpy(zero_copy_only=False).astype(bool)
            parts = (_docs_view(t, streamed.text_col) for t in streamed.tables(keep))
            write_parquet_parts(store, folder, _docs_view(streamed.empty(), streamed.text_col)
                                .schema, parts)  # fmt: skip
        else:
            write_parquet(store, folder, frames[name])


def try_local(config: DedupConfig) -> Summary | None:
    """The job's first try (``submit.job_main``, before any Spark session): ``config`` run
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
