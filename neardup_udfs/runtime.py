"""What every spark-submit job shares: stage timing, persisted frames, outputs, the report,
the manifest and the ``main`` skeleton (config errors before Spark, exit status 2)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs import __version__, settings
from neardup_udfs.config import ConfigError, InputConfig, Settings
from neardup_udfs.io.input_files import DANGLING_REASON, HIDDEN_REASON, Unread, unread_files
from neardup_udfs.io.outputs import OutputClaim, check_directory, claim_output
from neardup_udfs.io.readers import (
    LINE_REASONS,
    MANIFEST_NAME,
    EmptyInput,
    InputError,
    malformed_lines,
    read_input,
    with_empty_files,
)
from neardup_udfs.io.storage import HadoopStorage, Storage, join
from neardup_udfs.schemas import CHARSET_OVERRIDDEN, LOST_BYTES, REASON, REJECTS_DDL, TEXT
from neardup_udfs.session import (
    JobCount,
    fit_adaptive,
    fit_shuffle_partitions,
    is_connect,
    lineage_cuts,
    run_settings,
)
from neardup_udfs.session import spark_conf as session_conf
from neardup_udfs.stages.rejects import split_rejects

__all__ = [
    "Cache",
    "Checked",
    "Job",
    "LostRecords",
    "RunScope",
    "StageClock",
    "StageRows",
    "begin_output",
    "cached_run",
    "check_directory",
    "check_rows",
    "counts_of",
    "input_stats",
    "job_main",
    "job_parser",
    "read_checked",
    "reason_counts",
    "report_of",
    "rejects_by_reason",
    "report_error",
    "write_frames",
    "write_report",
]

_log = logging.getLogger("neardup.runtime")

C = TypeVar("C")
S = TypeVar("S")


@dataclass
class StageRows:
    """Row counts a stage reports for its "done" log line (None = not counted)."""

    rows_in: int | None = None
    rows_out: int | None = None


class StageClock:
    """Wall time per named stage; one log line when each stage starts and one when it ends
    (with the rows in and out the stage sets on the yielded :class:`StageRows`)."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[StageRows]:
        self.log.info("stage %s: start", name)
        rows = StageRows()
        t = time.perf_counter()
        yield rows
        self.seconds[name] = round(time.perf_counter() - t, 3)
        counted = ""
        if rows.rows_in is not None or rows.rows_out is not None:
            counted = f", rows {_count(rows.rows_in)} in, {_count(rows.rows_out)} out"
        self.log.info("stage %s: done in %.1f s%s", name, self.seconds[name], counted)


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


class Cache:
    """The frames a run persisted; ``release`` unpersists them all (call it in ``finally``)."""

    def __init__(self) -> None:
        self.frames: list[DataFrame] = []

    def keep(self, df: DataFrame) -> DataFrame:
        self.frames.append(df.persist())
        return df

    def materialize(self, df: DataFrame) -> tuple[DataFrame, int]:
        self.keep(df)
        return df, df.count()

    def release(self) -> None:
        for df in self.frames:
            df.unpersist()
        self.frames.clear()


@dataclass(frozen=True)
class RunScope:
    """What one run holds while it runs (:func:`cached_run`)."""

    cache: Cache  # the frames it persisted
    jobs: JobCount  # the Spark jobs it launched
    cuts: dict[str, object]  # report.json "spark": where its lineage cuts go
    exits: list[Callable[[], None]] = field(default_factory=list)  # called when it ends

    def spark_report(
        self, spark: SparkSession, partitions: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """report.json's ``spark``: the shuffle partitions the run fitted (``partitions``,
        ``Checked.partitions``), where its lineage cuts went and its Spark jobs so far."""
        return {**(partitions or {}), **self.cuts, "jobs": self.jobs.count(spark)}


def cached_run(
    spark: SparkSession,
    description: str,
    checkpoint_dir: str | None,
    body: Callable[[RunScope], S],
    spark_conf: Mapping[str, str] | None = None,
    *,
    hold: bool = False,
) -> S:
    """``body(scope)`` for one run: inside ``session.run_settings`` and
    ``session.lineage_cuts`` (``checkpoint_dir``), in a job group of its own named
    ``description`` (``scope.jobs`` counts its Spark jobs), with the session's ``spark_conf``
    set for the run. Before this returns or raises, every frame persisted through
    ``scope.cache`` is released (with ``hold``, only when it raises: the caller releases
    them) and the session's job group and values are as before."""
    cache, jobs = Cache(), JobCount()
    held = False
    jobs.start(spark, description)
    try:
        with (
            session_conf(spark, spark_conf or {}),
            run_settings(spark),
            lineage_cuts(spark, checkpoint_dir) as cuts,
        ):
            scope = RunScope(cache, jobs, cuts)
            try:
                result = body(scope)
                held = hold
                return result
            finally:
                for release in reversed(scope.exits):
                    release()
    finally:
        if not held:
            cache.release()
        jobs.stop(spark)


@dataclass(frozen=True)
class Checked:
    """A job's input, read once: accepted rows, rejects, their counts, the text column."""

    good: DataFrame  # every input column, plus doc_id and text
    n_good: int
    rejects: DataFrame  # doc_id, reason
    n_rejected: int
    text_col: str  # the input's own name of the text column
    stats: dict[str, Any]  # report.json's "input": rejects by reason, unreadable bytes
    partitions: dict[str, Any]  # report.json's "spark": the shuffle partitions and their source
    text_bytes: int = 0  # the accepted rows' text, in UTF-8 bytes

    @property
    def rows(self) -> int:
        return self.n_good + self.n_rejected


def read_checked(
    spark: SparkSession,
    config: InputConfig,
    cache: Cache,
    path: str | None = None,
    require: Iterable[tuple[str, str]] = (),
) -> Checked:
    """``path`` (default ``config.input``) read as ``config`` says, split into accepted rows
    and rejects (``split_rejects``), read and ranked once (``Cache.split``). Fits the
    session's shuffle partitions to the input and, for a small input, turns adaptive
    execution off, unless they were chosen (``session.fit_shuffle_partitions``,
    ``session.fit_adaptive``; call it inside ``session.run_settings``).

    Every record is accounted for: besides the rows Spark reads, each user file it passes
    over for its name and each dangling symbolic link (``input_files``; every format) is a
    reject of its own (report.json ``input``: ``skipped_files``), a 0-byte text file is an
    empty document, and a JSON line that is malformed or not text, or the unreadable rest of
    a broken ``.gz`` file, is a reject named by its file and line (``<file URI>#L<line>``,
    ``readers.LINE_REASONS``). An input with no records at all raises :class:`EmptyInput`
    unless ``config.allow_empty_input``.

    ``require``: (config key, column) pairs the input must have, else :class:`InputError`
    naming the key."""
    path = path or config.input
    allow_empty = config.allow_empty_input
    parquet = config.input_format == "parquet"
    unread = unread_files(HadoopStorage(spark), path, parquet=parquet)
    skipped = _skipped_files(unread)
    raw, text_col = read_input(
        spark,
        path,
        config.input_format,
        config.id_col,
        config.text_col,
        config.warc_options(),
        allow_empty=allow_empty or bool(skipped),
        files=unread.read,
    )
    if config.input_format == "text":
        raw = with_empty_files(spark, raw, unread.empty)  # a 0-byte file is an empty document
    for key, column in require:
        if column not in raw.columns:
            raise InputError(
                f"{key} {column!r} is not a column of the input (columns: {', '.join(raw.columns)})"
            )
    listed = unread.read_bytes if not parquet else None  # Parquet's bytes are compressed
    return check_rows(
        spark, raw, text_col, config.max_text_bytes, cache,
        size=listed, skipped=skipped, allow_empty=allow_empty, name=path,
    )  # fmt: skip


def check_rows(
    spark: SparkSession,
    raw: DataFrame,
    text_col: str,
    max_text_bytes: int,
    cache: Cache,
    *,
    size: int | None = None,
    skipped: Sequence[tuple[str, str]] = (),
    allow_empty: bool = True,
    name: str = "the input",
) -> Checked:
    """``raw`` (with ``doc_id``) split into accepted rows and rejects (``split_rejects``),
    read and ranked once (persisted through ``cache``); ``skipped``: (doc_id, reason)
    rejects of records that have no row (files passed over). Fits the session's shuffle
    partitions (to ``size`` bytes, else ``raw``'s plan statistics) and adaptive execution
    (``session.fit_shuffle_partitions``, ``session.fit_adaptive``; call it inside
    ``session.run_settings``). No rows at all raise :class:`EmptyInput` naming ``name``
    unless ``allow_empty``."""
    # Spark Connect shows no plan statistics: a frame of unknown size is fitted once its
    # first pass has counted its text (that pass runs on the session's own partitions)
    unknown = size is None and is_connect(spark)
    partitions = {} if unknown else fit_shuffle_partitions(spark, raw, size)
    split = split_rejects(raw, text_col, max_text_bytes)
    cache.keep(split.tagged)  # the input is read and ranked once, for the counts and later
    counts, text_bytes = _counted(split.tagged)
    n_good = counts.pop(None, 0)
    if unknown:
        partitions = fit_shuffle_partitions(spark, raw, int(text_bytes or 0))
    partitions.update(fit_adaptive(spark, text_bytes))
    rejects = split.rejects
    if any(counts.get(r) for r in LINE_REASONS):  # named by file and line, not by a null id
        located = malformed_lines(split.tagged)
        rejects = rejects.where(~F.col(REASON).isin(*LINE_REASONS)).unionByName(located)
    if skipped:
        rejects = rejects.unionByName(spark.createDataFrame(list(skipped), REJECTS_DDL))
        for _, reason in skipped:
            counts[reason] = counts.get(reason, 0) + 1
    n_rejected = sum(counts.values())
    if n_good + n_rejected == 0 and not allow_empty:
        raise EmptyInput(name)
    stats = input_stats(split.tagged, counts=counts)
    if skipped:
        stats["skipped_files"] = len(skipped)
    return Checked(
        split.good, n_good, rejects, n_rejected, text_col, stats, partitions, int(text_bytes or 0)
    )


def _skipped_files(unread: Unread) -> list[tuple[str, str]]:
    """A reject (doc_id, reason) per file Spark passes over: hidden names, dangling links."""
    return [(f.uri, HIDDEN_REASON) for f in unread.hidden] + [
        (f.uri, DANGLING_REASON) for f in unread.dangling
    ]


def _counted(tagged: DataFrame) -> tuple[dict[str | None, int], int]:
    """``reason_counts(tagged)`` and the text bytes of the accepted rows, in one Spark job."""
    got = tagged.groupBy(REASON).agg(
        F.count(F.lit(1)).alias("count"), F.sum(F.octet_length(TEXT)).alias("bytes")
    )
    rows = got.collect()
    counts = {r[REASON]: int(r["count"]) for r in rows}
    return counts, sum(int(r["bytes"] or 0) for r in rows if r[REASON] is None)


def reason_counts(tagged: DataFrame) -> dict[str | None, int]:
    """Rows of ``tagged`` per ``reason`` (None: the accepted rows), in one Spark job."""
    return {r[REASON]: int(r["count"]) for r in tagged.groupBy(REASON).count().collect()}


def rejects_by_reason(
    counts: Mapping[str | None, int] | Mapping[str, int], top: int = 50
) -> dict[str, int]:
    """report.json's ``rejects_by_reason``: the ``top`` most frequent reasons of ``counts``
    (rows per reason; None, the accepted rows, left out), ties by reason."""
    by_reason = sorted((-n, r) for r, n in counts.items() if r is not None)[:top]
    return {r: -n for n, r in by_reason}


def input_stats(
    tagged: DataFrame, top: int = 50, counts: dict[str | None, int] | None = None
) -> dict[str, Any]:
    """What report.json says about the input: rejected rows by reason (the ``top`` most
    frequent, ties by reason); for readers that can lose bytes (WARC), the bytes they could
    not read; for readers that decode text (WARC), ``charset_overridden``, the records
    decoded against their declared charset (valid UTF-8 declared otherwise, or a byte order
    mark that contradicts it). ``counts``: ``reason_counts(tagged)``, when the caller has it."""
    counts = reason_counts(tagged) if counts is None else counts
    stats: dict[str, Any] = {"rejects_by_reason": rejects_by_reason(counts, top)}
    figures: list[Column] = []
    if LOST_BYTES in tagged.columns:
        figures += [F.sum(LOST_BYTES).alias("bytes"), F.countDistinct("path").alias("files")]
    if CHARSET_OVERRIDDEN in tagged.columns:
        figures.append(F.count(F.when(F.col(CHARSET_OVERRIDDEN), 1)).alias("overridden"))
    if not figures:
        return stats
    got = tagged.agg(*figures).first()  # one Spark job for all of them
    if LOST_BYTES in tagged.columns:
        stats["files"] = int(got["files"] or 0) if got else 0
        stats["unreadable_bytes"] = int(got["bytes"] or 0) if got else 0
    if CHARSET_OVERRIDDEN in tagged.columns:
        stats[CHARSET_OVERRIDDEN] = int(got["overridden"] or 0) if got else 0
    return stats


def begin_output(
    store: HadoopStorage,
    output: str,
    run: RunScope,
    *,
    job: str,
    names: Iterable[str],
    inputs: Sequence[tuple[str, str | None]] = (),
    keep_existing: bool = False,
) -> OutputClaim:
    """Claim ``output`` for this run before any data is read (``outputs.claim_output``:
    refused, as an :class:`InputError` naming the path, when it is, contains or lies inside
    one of ``inputs``, lies under a regular file, holds one of ``names`` or a report that
    neardup did not write, is locked by a live run, or cannot be written; with
    ``keep_existing``, when it holds any of ``names``). The claim's lock
    is released when ``run`` ends, whatever its outcome; the previous run's
    ``_MANIFEST.json`` is removed, so a run that fails leaves no success marker."""
    claim = claim_output(
        store, output, job=job, names=names, inputs=inputs, keep_existing=keep_existing
    )
    run.exits.append(claim.release)
    return claim


def write_frames(
    store: Storage,
    output: str,
    frames: Mapping[str, DataFrame],
    wanted: Iterable[str],
    every: Iterable[str],
) -> None:
    """Write the ``wanted`` frames as parquet under ``output``, after removing (through
    ``store``) every output directory the job can write (``every``), so a rerun never leaves
    stale outputs behind. Call it only on an output the run claimed (:func:`begin_output`
    proved each of ``every`` present there is a folder of the job's own)."""
    for name in every:
        store.delete(join(output, name))
    for name in wanted:
        frames[name].write.mode("overwrite").parquet(join(output, name))


class LostRecords(RuntimeError):
    """The job's outputs do not account for every input row: it writes no manifest."""


def job_parser(
    prog: str, description: str, cls: type, config_file: str, skip: Sequence[str] = ()
) -> argparse.ArgumentParser:
    """A job's argument parser: ``--config`` (the TOML file, ``config_file`` in the help)
    and a flag for every key of the config class ``cls`` but ``skip``
    (``settings.add_arguments``: each defaults to None, so the file's value stands)."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--config", help=f"TOML file ({config_file}); flags override it")
    settings.add_arguments(p, cls, skip)
    return p


def write_report(
    store: Storage,
    output: str,
    job: str,
    *,
    counts: Mapping[str, Any],
    seconds: Mapping[str, float],
    pipeline: tuple[str, str],
    config: Settings,
    pages: Sequence[Callable[[Storage, str, dict[str, Any]], object]] = (),
    **extra: Any,
) -> None:
    """``report.json``, then each of ``pages`` (called with ``store``, ``output`` and the
    report: e.g. report.html), then ``_MANIFEST.json`` (the success marker), all through
    ``store``, the manifest with the same content as report.json: the
    counts, seconds per stage, pipeline id and version, the config, the package version, and
    ``extra`` keys. A page that raises is logged and listed under ``page_errors`` in the
    manifest; the run still succeeds, since every output is already written (``neardup
    report DIR`` rebuilds report.html)."""
    report = report_of(counts=counts, seconds=seconds, pipeline=pipeline, config=config, **extra)
    store.write_bytes(join(output, "report.json"), _json_bytes(report))
    failed = []
    for page in pages:
        try:
            page(store, output, report)
        except Exception as e:  # a page is a view of outputs already written: never lose them
            name = getattr(page, "__name__", repr(page))
            _log.error("%s failed (%s: %s); the outputs are complete", name, type(e).__name__, e)
            failed.append(f"{name}: {type(e).__name__}: {e}")
    manifest = {"job": job, **report, **({"page_errors": failed} if failed else {})}
    store.write_bytes(join(output, MANIFEST_NAME), _json_bytes(manifest))


def report_of(
    *,
    counts: Mapping[str, Any],
    seconds: Mapping[str, float],
    pipeline: tuple[str, str],
    config: Settings,
    **extra: Any,
) -> dict[str, Any]:
    """What report.json holds (:func:`write_report`): the counts, seconds per stage,
    pipeline id and version, the config, the package version, and ``extra`` keys."""
    return {
        "counts": dict(counts),
        "seconds": dict(seconds),
        "pipeline": {"id": pipeline[0], "version": pipeline[1]},
        "config": config.to_dict(),
        "neardup_version": __version__,
        **extra,
    }


def _json_bytes(data: Mapping[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")


@dataclass(frozen=True)
class Job(Generic[C, S]):
    """A spark-submit job: its config class (every key a flag) and TOML file, its run, and
    the line it prints when the run succeeds. ``jobs/<job>.py`` declares one and exposes
    its ``build_parser`` and ``main``."""

    prog: str  # the script's name, as spark-submit is given it
    description: str
    config: type[C]
    config_file: str  # conf/<job>.toml, named in --config's help
    run: Callable[[SparkSession, C], S]
    describe: Callable[[C, S], str]
    skip: tuple[str, ...] = ()  # keys of ``config`` that take no flag in this job
    extend: Callable[[argparse.ArgumentParser], None] | None = None  # arguments of its own
    local: Callable[[C], S | None] | None = None  # a run without Spark, tried first

    def build_parser(self) -> argparse.ArgumentParser:
        """``--config`` and a flag for every key of the config class but ``skip``, then the
        job's own arguments."""
        p = job_parser(self.prog, self.description, self.config, self.config_file, self.skip)
        if self.extend is not None:
            self.extend(p)
        return p

    def main(self, argv: Sequence[str] | None = None) -> int:
        """``job_main`` of this job: 0 on success, 2 when the config or the input is wrong."""
        return job_main(
            argv,
            prog=self.prog,
            parser=self.build_parser(),
            load=partial(settings.load, self.config),
            run=self.run,
            describe=self.describe,
            local=self.local,
        )


def job_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    parser: argparse.ArgumentParser,
    load: Callable[..., C],
    run: Callable[[SparkSession, C], S],
    describe: Callable[[C, S], str],
    local: Callable[[C], S | None] | None = None,
) -> int:
    """Parse ``argv``, load the config (``--config`` file plus flags) before Spark starts,
    run (``local(config)`` first, when given: a summary, or None when the run needs Spark),
    print ``describe(config, summary)``.

    Returns:
        0 on success; 2 when the config or the input is wrong (one line on stderr).
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    parser.add_argument(
        "--no-progress-bar",
        dest="no_progress_bar",
        action="store_true",
        help="no Spark console progress bar (for schedulers such as Airflow: logs stay lines)",
    )
    args = vars(parser.parse_args(argv))
    quiet = args.pop("no_progress_bar")
    path = args.pop("config")
    try:
        config = load(path, **args)
    except ConfigError as e:
        report_error(f"{prog}: error: {e}")
        return 2
    if local is not None:
        try:
            done = local(config)
        except InputError as e:
            report_error(f"{prog}: error: {e}")
            return 2
        if done is not None:
            print(describe(config, done))
            return 0
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(f"neardup-{prog.removesuffix('.py')}")
    if quiet:
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    spark = builder.getOrCreate()
    try:
        summary = run(spark, config)
    except InputError as e:
        report_error(f"{prog}: error: {e}", spark)
        return 2
    finally:
        spark.stop()
    print(describe(config, summary))
    return 0


def report_error(line: str, spark: SparkSession | None = None) -> None:
    """``line`` (newlines folded to spaces) on the error stream of the process the user
    started: the Python process's stderr, or, under ``spark-submit`` (whose launcher merges
    the Python driver's stderr into its stdout), the JVM's ``System.err``."""
    line = " ".join(line.split("\n"))
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not launched by spark-submit
        print(line, file=sys.stderr, flush=True)
        return
    try:
        jvm: Any
        if spark is not None:
            jvm = spark.sparkContext._jvm
        else:
            from pyspark.java_gateway import launch_gateway

            jvm = launch_gateway().jvm  # spark-submit's own gateway: connects, starts nothing
        sys.stdout.flush()
        jvm.java.lang.System.err.println(line)
        jvm.java.lang.System.err.flush()
    except Exception:  # the JVM is gone: the merged stream is all there is
        print(line, file=sys.stderr, flush=True)


def counts_of(summary: Any, *skip: str) -> dict[str, Any]:
    """A job summary dataclass's integer counts (``seconds``, ``pipeline`` and ``skip`` out)."""
    return {
        k: v
        for k, v in asdict(summary).items()
        if k not in ("seconds", "pipeline", "input_stats", *skip)
    }
