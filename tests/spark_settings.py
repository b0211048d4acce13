"""Test helper: run a block under other Spark SQL settings, restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from neardup_udfs import session


@contextmanager
def spark_conf(spark, **settings: str) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """``settings`` (Spark SQL keys, as keyword arguments) in force inside the block
    (``session.spark_conf``)."""
    with session.spark_conf(spark, settings):
        yield
