"""The read stage every text run shares: an input (files, or a caller's DataFrame) read once,
split into accepted rows and rejects, every record accounted for, and the counts report.json
says about it; the session's shuffle partitions fitted to it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup_udfs.io.input_files import DANGLING_REASON, HIDDEN_REASON, Unread, unread_files
from neardup_udfs.io.readers import (
    LINE_REASONS,
    EmptyInput,
    InputError,
    malformed_lines,
    read_input,
    with_empty_files,
)
from neardup_udfs.io.reasons import rejects_by_reason
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.runtime import Cache
from neardup_udfs.schemas import CHARSET_OVERRIDDEN, LOST_BYTES, REASON, REJECTS_DDL, TEXT
from neardup_udfs.session import UNKNOWN_SIZE, fit_adaptive, fit_shuffle_partitions, plan_bytes
from neardup_udfs.stages.rejects import split_rejects

if TYPE_CHECKING:  # a stage takes a validated config; it imports no config code
    from neardup_udfs.config import InputConfig

__all__ = [
    "Checked",
    "check_rows",
    "input_stats",
    "read_checked",
    "reason_counts",
]


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
    # a frame whose size Spark cannot tell is fitted again once its first pass (which ranks
    # and persists it on the floor's partitions) has counted its text
    size = plan_bytes(raw) if size is None else size
    partitions = fit_shuffle_partitions(spark, raw, size)
    split = split_rejects(raw, text_col, max_text_bytes)
    cache.keep(split.tagged)  # the input is read and ranked once, for the counts and later
    counts, text_bytes = _counted(split.tagged)
    n_good = counts.pop(None, 0)
    if size >= UNKNOWN_SIZE:
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
