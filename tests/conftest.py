"""Shared fixtures: golden vectors (copied into tests/golden by `make golden`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

TESTS = Path(__file__).parent

# JIT compilation and a noisy 2-core machine make per-example timings meaningless.
settings.register_profile("neardup", deadline=None)
settings.load_profile("neardup")
sys.path.insert(0, str(TESTS))  # the naive oracle lives beside the tests


@pytest.fixture(scope="session")
def ditto_golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TESTS / "golden" / "generated-ditto.json").read_text())
    return data


@pytest.fixture(scope="session")
def golden_inputs(ditto_golden: dict[str, Any]) -> list[tuple[str, bytes]]:
    return [(i["id"], bytes.fromhex(i["hex"])) for i in ditto_golden["inputs"]]


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One local SparkSession for the whole run, configured before it exists."""
    import os

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
