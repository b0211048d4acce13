"""What every run shares, whatever its job: stage timing, the frames it persisted, the scope
it runs in (session settings, lineage cuts, a job group of its own), and the error of a run
whose outputs do not account for its input."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pyspark.sql import DataFrame, SparkSession

from neardup_udfs.session import JobCount, lineage_cuts, run_settings
from neardup_udfs.session import spark_conf as session_conf

if TYPE_CHECKING:  # only its type: runtime imports no config code
    from neardup_udfs.config import RunConfig

__all__ = [
    "Cache",
    "RunScope",
    "cached_run",
    "run_scoped",
]

S = TypeVar("S")
C = TypeVar("C", bound="RunConfig")


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


def run_scoped(
    spark: SparkSession,
    job: str,
    config: C,
    body: Callable[[SparkSession, C, RunScope], S],
    spark_conf: Mapping[str, str] | None = None,
) -> S:
    """``body(spark, config, scope)`` as ``runtime.cached_run`` runs it: its job group named
    ``neardup JOB INPUT`` (``job`` may hold more words, e.g. an action), lineage cut into
    ``config.checkpoint_dir``, ``spark_conf`` set for the run, and everything persisted
    through ``scope.cache`` released before this returns or raises."""
    return cached_run(
        spark,
        f"neardup {job} {config.input}",
        config.checkpoint_dir,
        lambda scope: body(spark, config, scope),
        spark_conf,
    )
