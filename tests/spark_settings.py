"""Test helper: run a block under other Spark SQL settings, restored afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def spark_conf(spark, **settings: str) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """``settings`` (Spark SQL keys) in force inside the block; the old values (or unset)
    come back however the block ends."""
    old = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
