"""What a run asks of its Spark session: shuffle partitions fitted to the input and adaptive
execution off for a small input, when nobody chose them (and the session's own settings
back when the run ends), lineage cuts that survive a lost executor where a checkpoint
directory is set, and a count of the Spark jobs the run launched (report.json's
``spark``)."""

from __future__ import annotations

import logging
import math
import os
import re
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

from neardup_udfs.engine import cores
from neardup_udfs.settings import ConfigError

__all__ = [
    "ADAPTIVE",
    "BYTES_PER_PARTITION",
    "JobCount",
    "SHUFFLE_PARTITIONS",
    "SMALL_INPUT_BYTES",
    "UNKNOWN_SIZE",
    "classic_context",
    "conf_of",
    "cut",
    "default_parallelism",
    "fit_adaptive",
    "is_connect",
    "fit_shuffle_partitions",
    "lineage_cuts",
    "local_session",
    "plan_bytes",
    "run_settings",
    "spark_conf",
    "stated_bytes",
]

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
_SPARK_DEFAULT = "200"
ADAPTIVE = "spark.sql.adaptive.enabled"
SMALL_INPUT_BYTES = 64 * 1024 * 1024
"""Text bytes up to which a run turns adaptive execution off when nobody chose it."""
BYTES_PER_PARTITION = 128 * 1024 * 1024
"""Input bytes per shuffle partition when the job fits the count to its input."""
UNKNOWN_SIZE = 1 << 62
"""Sizes from here up are what Spark's plan statistics say of a source of unknown size."""

_log = logging.getLogger("neardup.session")
_GROUP_KEYS = ("spark.jobGroup.id", "spark.job.description")


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def classic_context(spark: SparkSession) -> SparkContext | None:
    """``spark``'s SparkContext on a classic session; None on Spark Connect, which has none.
    The one gate to what only a classic session offers: everything a run needs works
    without it."""
    return None if is_connect(spark) else spark.sparkContext


def _chosen_by_user(spark: SparkSession, key: str = SHUFFLE_PARTITIONS) -> bool:
    sc = classic_context(spark)
    if sc is not None and sc.getConf().contains(key):
        return True  # spark-submit --conf, a properties file, the session's builder
    default = _SPARK_DEFAULT if key == SHUFFLE_PARTITIONS else "true"
    return spark.conf.get(key) != default  # spark.conf.set at runtime


class _DriverConf(Mapping[str, str]):
    """A session's runtime conf, read as a mapping (only ``get`` is asked of it)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def __getitem__(self, key: str) -> str:
        value = self.spark.conf.get(key, None)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def conf_of(spark: SparkSession) -> Mapping[str, str]:
    """``spark``'s runtime conf as a mapping of Spark properties (the values ``engine``
    reads: the master, the driver's memory, cores and result limit), on classic and Connect
    sessions alike; only ``get`` is asked of it."""
    return _DriverConf(spark)


def local_session(app: str, conf: Mapping[str, str], master: str = "local[2]") -> SparkSession:
    """A Spark session in this process (tests, benches) whose Python workers run this
    interpreter, with the session-wide ``conf`` given before it starts."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


@contextmanager
def spark_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` (runtime Spark SQL keys) in force inside the block; the old values (or
    unset) come back however the block ends."""
    old = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in old.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


@contextmanager
def run_settings(spark: SparkSession) -> Iterator[None]:
    """For the ``with`` block (one run): what the run fits (:func:`fit_shuffle_partitions`,
    :func:`fit_adaptive`) applies; afterwards the session's own values are back (a key the
    session had not set is unset again), so a second run in the same session fits its own
    input again."""
    given = spark.conf.getAll  # the keys set in this session (a default is not listed)
    before = {key: given.get(key) for key in (SHUFFLE_PARTITIONS, ADAPTIVE)}
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:  # unset before: unset again, not set to its default
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def fit_adaptive(spark: SparkSession, text_bytes: int) -> dict[str, object]:
    """Turns adaptive execution off for this session when the run's input holds at most
    :data:`SMALL_INPUT_BYTES` of text and nobody chose ``spark.sql.adaptive.enabled``;
    returns what report.json records (``adaptive``, and ``adaptive_from``: ``"config"`` or
    ``"input size"``).

    Notes:
        On a small input adaptive execution has nothing to coalesce (the partitions are
        fitted already) and no skew to split, but it runs every query stage as a Spark job
        of its own: a 1,334-document run launched 79 Spark jobs with it and 40 without, and
        took about a fifth longer (47-50 s against 40 s). Results never depend on it
        (tested). A value set anywhere (``--conf``, a properties file, the builder,
        ``spark.conf.set`` to ``false``) stands.
    """
    if _chosen_by_user(spark, ADAPTIVE):
        on = str(spark.conf.get(ADAPTIVE)).lower() == "true"
        return {"adaptive": on, "adaptive_from": "config"}
    small = text_bytes <= SMALL_INPUT_BYTES
    if small:
        spark.conf.set(ADAPTIVE, "false")
    _log.info("adaptive execution: %s (%s bytes of text; set %s to choose)",
              "off" if small else "on", f"{text_bytes:,}", ADAPTIVE)  # fmt: skip
    return {"adaptive": not small, "adaptive_from": "input size"}


def fit_shuffle_partitions(
    spark: SparkSession, source: DataFrame, size: int | None = None
) -> dict[str, object]:
    """Sets ``spark.sql.shuffle.partitions`` for this session from the size of ``source``
    (``size`` bytes when given, e.g. its files' sizes; else what Spark's plan statistics
    say) unless somebody chose it; returns what report.json records (``shuffle_partitions``
    and ``shuffle_partitions_from``: ``"config"`` or ``"input size"``).

    Notes:
        The fitted count is ``max(2 x spark.default.parallelism, input bytes / 128 MiB)``:
        Spark's own default (200) makes a test-sized run pay for 200 tasks per stage (most
        of a small run's time) and gives a crawl of terabytes partitions of gigabytes. A
        source whose size Spark cannot tell gets ``2 x parallelism``. A value set anywhere
        (``--conf``, a properties file, the builder, ``spark.conf.set`` to anything but
        200) stands.
    """
    if _chosen_by_user(spark):
        return {"shuffle_partitions": int(spark.conf.get(SHUFFLE_PARTITIONS) or 0),
                "shuffle_partitions_from": "config"}  # fmt: skip
    floor = 2 * default_parallelism(spark)
    if size is None:  # plan statistics of a JSON source are an estimate after projection
        size = plan_bytes(source)
    n = floor if size >= UNKNOWN_SIZE else max(floor, math.ceil(size / BYTES_PER_PARTITION))
    spark.conf.set(SHUFFLE_PARTITIONS, str(n))
    told = "unknown" if size >= UNKNOWN_SIZE else f"{size:,}"
    _log.info("shuffle partitions: %d (input of %s bytes; set %s to choose)", n, told,
              SHUFFLE_PARTITIONS)  # fmt: skip
    return {"shuffle_partitions": n, "shuffle_partitions_from": "input size"}


def plan_bytes(source: DataFrame) -> int:
    """The bytes Spark's optimizer estimates ``source`` holds, on a classic or a Spark
    Connect session; at least :data:`UNKNOWN_SIZE` when it cannot tell (a source without
    statistics)."""
    try:
        if is_connect(source.sparkSession):  # the server's cost explain: its statistics
            explain: Any = source._explain_string  # the Connect client's
            return stated_bytes(explain(mode="cost"))
        return int(str(source._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # a plan Spark cannot estimate
        return UNKNOWN_SIZE


_UNITS = {"B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40, "PiB": 50, "EiB": 60}
_STATED = re.compile(r"sizeInBytes=([0-9]+(?:\.[0-9]+)?) ?(" + "|".join(_UNITS) + r")\b")


def stated_bytes(explained: str) -> int:
    """The root's ``sizeInBytes`` in a plan explained with statistics (Spark's ``cost``
    mode: the first one stated, as ``134.3 KiB``); :data:`UNKNOWN_SIZE` when none is."""
    found = _STATED.search(explained.partition("== Optimized Logical Plan ==")[2] or explained)
    if found is None:
        return UNKNOWN_SIZE
    return math.ceil(float(found.group(1)) * (1 << _UNITS[found.group(2)]))


def default_parallelism(spark: SparkSession) -> int:
    """Spark's default parallelism: the SparkContext's on a classic session; on Spark
    Connect, ``spark.default.parallelism`` when set, else the driver's cores by the master
    (``engine.cores``)."""
    sc = classic_context(spark)
    if sc is not None:
        return max(1, sc.defaultParallelism)
    try:
        chosen = int(spark.conf.get("spark.default.parallelism", None) or 0)
    except ValueError:
        chosen = 0
    return chosen if chosen > 0 else cores(_DriverConf(spark))


@dataclass
class JobCount:
    """Counts the Spark jobs launched from this thread after ``start`` (in a job group of its
    own; ``stop`` gives the thread its previous group back)."""

    group: str = field(default_factory=lambda: f"neardup-{uuid.uuid4().hex[:12]}")
    _previous: tuple[str | None, str | None] | None = None

    def start(self, spark: SparkSession, description: str) -> None:
        sc = classic_context(spark)
        if sc is None:  # Spark Connect: no job groups, no status tracker to count by
            return
        self._previous = (sc.getLocalProperty(_GROUP_KEYS[0]), sc.getLocalProperty(_GROUP_KEYS[1]))
        sc.setJobGroup(self.group, description)

    def count(self, spark: SparkSession) -> int | None:
        """The number of jobs launched since ``start`` (as Spark's status store keeps them:
        the latest ``spark.ui.retainedJobs``, 1,000 by default); None on Spark Connect."""
        sc = classic_context(spark)
        return None if sc is None else len(sc.statusTracker().getJobIdsForGroup(self.group))

    def stop(self, spark: SparkSession) -> None:
        """The thread's previous job group again (once; later calls do nothing)."""
        sc = classic_context(spark)
        if self._previous is None or sc is None:
            return
        for key, value in zip(_GROUP_KEYS, self._previous, strict=True):
            sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes it
        self._previous = None


@contextmanager
def lineage_cuts(spark: SparkSession, checkpoint_dir: str | None) -> Iterator[dict[str, object]]:
    """For the ``with`` block: the session's checkpoint directory is ``checkpoint_dir`` when
    given (else Spark's own ``spark.checkpoint.dir``, if set, stands), and the previous one
    again afterwards. Yields what report.json records: ``lineage_cuts`` (``"checkpoint"``:
    reliable checkpoints in ``checkpoint_dir``, which survive the loss of the executor that
    computed them; ``"local"``: local checkpoints, kept on the executors).

    On Spark Connect the checkpoint directory is the server's ``spark.checkpoint.dir``
    (fixed when it starts): a ``checkpoint_dir`` other than that is a ConfigError."""
    sc = classic_context(spark)
    if sc is None:
        where = _connect_checkpoint_dir(spark)
        if checkpoint_dir and checkpoint_dir != where:
            raise ConfigError(
                f"checkpoint_dir: {checkpoint_dir!r} cannot be set on a Spark Connect session; "
                "start the Connect server with spark.checkpoint.dir instead"
                + (f" (it has {where!r})" if where else " (it has none: local checkpoints)")
            )
        yield (
            {"lineage_cuts": "checkpoint", "checkpoint_dir": where}
            if where
            else {"lineage_cuts": "local"}
        )
        return
    before = sc.getCheckpointDir()
    if checkpoint_dir:
        sc.setCheckpointDir(checkpoint_dir)
    where = sc.getCheckpointDir()
    try:
        if where:
            yield {"lineage_cuts": "checkpoint", "checkpoint_dir": where}
        else:
            yield {"lineage_cuts": "local"}
    finally:
        if checkpoint_dir:  # no public setter takes None: the context's own field
            previous = sc._jvm.scala.Option.apply(before)  # type: ignore[union-attr]
            getattr(sc._jsc.sc(), "checkpointDir_$eq")(previous)


def cut(df: DataFrame) -> DataFrame:
    """``df`` computed now, with its lineage cut: a reliable checkpoint when the session
    has a checkpoint directory (:func:`lineage_cuts`), a local checkpoint otherwise."""
    spark = df.sparkSession
    sc = classic_context(spark)
    if sc.getCheckpointDir() if sc is not None else _connect_checkpoint_dir(spark):
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def _connect_checkpoint_dir(spark: SparkSession) -> str | None:
    return spark.conf.get("spark.checkpoint.dir", None) or None
