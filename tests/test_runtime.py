"""The run's scope on a Spark session (its job group, settings and persisted frames)."""

from __future__ import annotations

import pytest

from neardup_udfs import runtime


@pytest.mark.spark
def test_a_run_is_scoped_to_its_job_and_input(spark) -> None:  # type: ignore[no-untyped-def]
    """``run_scoped``: the body gets the session, the config and a scope; its Spark jobs run
    in a group described ``neardup JOB INPUT``; the run's Spark settings hold only while it
    runs, and what it persisted is released when it returns."""
    from types import SimpleNamespace

    config = SimpleNamespace(input="in/x", checkpoint_dir=None)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    seen: dict[str, object] = {}

    def body(session, cfg, scope):  # type: ignore[no-untyped-def]
        seen["args"] = (session, cfg)
        seen["description"] = session.sparkContext.getLocalProperty("spark.job.description")
        seen["conf"] = session.conf.get(key)
        frame = scope.cache.keep(session.range(3))
        seen["frame"] = frame
        return frame.count()

    assert runtime.run_scoped(spark, "images", config, body, {key: "77"}) == 3  # type: ignore[arg-type]
    assert seen["args"] == (spark, config)
    assert seen["description"] == "neardup images in/x" and seen["conf"] == "77"
    assert spark.conf.get(key) == before
    assert not seen["frame"].is_cached  # type: ignore[attr-defined]
