"""What a run asks of its Spark session: shuffle partitions fitted to the input when nobody
chose them, lineage cuts that survive a lost executor where a checkpoint directory is set,
and a count of the Spark jobs the run launched (report.json's ``spark``)."""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "BYTES_PER_PARTITION",
    "JobCount",
    "SHUFFLE_PARTITIONS",
    "cut",
    "fit_shuffle_partitions",
    "lineage_cuts",
]

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
_SPARK_DEFAULT = "200"
BYTES_PER_PARTITION = 128 * 1024 * 1024
"""Input bytes per shuffle partition when the job fits the count to its input."""
_UNKNOWN_SIZE = 1 << 62  # what Spark's plan statistics say for a source of unknown size

_log = logging.getLogger("neardup.session")
_GROUP_KEYS = ("spark.jobGroup.id", "spark.job.description")


def _chosen_by_user(spark: SparkSession) -> bool:
    if spark.sparkContext.getConf().contains(SHUFFLE_PARTITIONS):
        return True  # spark-submit --conf, a properties file, the session's builder
    return spark.conf.get(SHUFFLE_PARTITIONS) != _SPARK_DEFAULT  # spark.conf.set at runtime


def fit_shuffle_partitions(spark: SparkSession, source: DataFrame) -> dict[str, object]:
    """Sets ``spark.sql.shuffle.partitions`` for this session from the size of ``source``
    unless somebody chose it; returns what report.json records (``shuffle_partitions`` and
    ``shuffle_partitions_from``: ``"config"`` or ``"input size"``).

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
    floor = 2 * max(1, spark.sparkContext.defaultParallelism)
    try:
        size = int(str(source._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # a source without plan statistics: the floor
        size = _UNKNOWN_SIZE
    n = floor if size >= _UNKNOWN_SIZE else max(floor, math.ceil(size / BYTES_PER_PARTITION))
    spark.conf.set(SHUFFLE_PARTITIONS, str(n))
    told = "unknown" if size >= _UNKNOWN_SIZE else f"{size:,}"
    _log.info("shuffle partitions: %d (input of %s bytes; set %s to choose)", n, told,
              SHUFFLE_PARTITIONS)  # fmt: skip
    return {"shuffle_partitions": n, "shuffle_partitions_from": "input size"}


@dataclass
class JobCount:
    """Counts the Spark jobs launched from this thread after ``start`` (in a job group of its
    own; ``stop`` gives the thread its previous group back)."""

    group: str = field(default_factory=lambda: f"neardup-{uuid.uuid4().hex[:12]}")
    _previous: tuple[str | None, str | None] | None = None

    def start(self, spark: SparkSession, description: str) -> None:
        sc = spark.sparkContext
        self._previous = (sc.getLocalProperty(_GROUP_KEYS[0]), sc.getLocalProperty(_GROUP_KEYS[1]))
        sc.setJobGroup(self.group, description)

    def count(self, spark: SparkSession) -> int:
        """The number of jobs launched since ``start`` (as Spark's status store keeps them:
        the latest ``spark.ui.retainedJobs``, 1,000 by default)."""
        return len(spark.sparkContext.statusTracker().getJobIdsForGroup(self.group))

    def stop(self, spark: SparkSession) -> None:
        """The thread's previous job group again (once; later calls do nothing)."""
        if self._previous is None:
            return
        sc = spark.sparkContext
        for key, value in zip(_GROUP_KEYS, self._previous, strict=True):
            sc.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes it
        self._previous = None


@contextmanager
def lineage_cuts(spark: SparkSession, checkpoint_dir: str | None) -> Iterator[dict[str, object]]:
    """For the ``with`` block: the session's checkpoint directory is ``checkpoint_dir`` when
    given (else Spark's own ``spark.checkpoint.dir``, if set, stands), and the previous one
    again afterwards. Yields what report.json records: ``lineage_cuts`` (``"checkpoint"``:
    reliable checkpoints in ``checkpoint_dir``, which survive the loss of the executor that
    computed them; ``"local"``: local checkpoints, kept on the executors)."""
    sc = spark.sparkContext
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
    if df.sparkSession.sparkContext.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)
