"""driver.outputs: the local engine's sample order is Spark's."""

from __future__ import annotations

import pytest

from neardup_udfs.driver import outputs as local_outputs


@pytest.mark.spark
def test_sample_order_is_sparks_xxhash64(spark) -> None:  # type: ignore[no-untyped-def]
    """``spark_xxhash64`` is Spark's ``xxhash64(lit(seed), value)`` for short, long (over 32
    bytes: the striped loop) and non-ASCII strings and several seeds."""
    from pyspark.sql import functions as F

    values = ["", "a", "abcd", "abcdefgh", "x" * 31, "y" * 32, "z" * 77, "héllo wörld ✓ 😀"]
    for seed in (0, 7, -3):
        df = spark.createDataFrame([(v,) for v in values], "v string")
        got = df.select("v", F.xxhash64(F.lit(seed), F.col("v")).alias("h")).collect()
        assert {r.v: r.h for r in got} == {v: local_outputs.spark_xxhash64(seed, v) for v in values}
