"""Test helpers: the JVM options of every JVM the tests start; a block run under other Spark
SQL settings, restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The JVM options of every JVM a test starts: the fast tier's session, each spark-submit of
the e2e tier, the standalone cluster's daemons, executors and driver, the Connect server. The
tiers are CPU-bound on two cores, and their queries are short: the JVM's optimizing compiler
and parallel collector threads compete with the work itself. The quick compiler alone and the
serial collector: tests/stages in 275 s against 341-344 s (1.24x); a spark-submit of ``make
run`` in 24 s of CPU against 42 s. Neither changes what a query computes; the jobs and the
Makefile keep the JVM's defaults, which pay off on long runs."""


@contextmanager
def spark_conf(spark, **settings: str) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """``settings`` (Spark SQL keys, as keyword arguments) in force inside the block
    (``session.spark_conf``)."""
    from neardup_udfs import session

    with session.spark_conf(spark, settings):
        yield
