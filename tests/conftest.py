"""Shared fixtures: golden vectors (copied into tests/golden by `make golden`)."""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from spark_settings import QUICK_JVM

from neardup_udfs.settings import DeprecatedKey

TESTS = Path(__file__).parent

# JIT compilation and a noisy 2-core machine make per-example timings meaningless.
settings.register_profile("neardup", deadline=None)
settings.load_profile("neardup")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Every numba kernel compiled (or loaded from numba's cache) before any test or Spark
    worker starts (see ``warm_kernels``)."""
    from warm_kernels import warm

    warm()


@pytest.fixture(autouse=True)
def _old_key_names_fail() -> Iterator[None]:
    """A test that gives a config key by its old name fails, unless it expects the warning
    (``pytest.warns(DeprecatedKey)``). Set here, not in pyproject's filterwarnings: naming
    the class there imports the package before coverage starts measuring."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedKey)
        yield


@pytest.fixture(scope="session")
def ditto_golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TESTS / "golden" / "generated-ditto.json").read_text())
    return data


@pytest.fixture(scope="session")
def golden_inputs(ditto_golden: dict[str, Any]) -> list[tuple[str, bytes]]:
    return [(i["id"], bytes.fromhex(i["hex"])) for i in ditto_golden["inputs"]]


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """One local SparkSession for the whole run, configured before it exists: local[2], no UI,
    2 shuffle partitions, adaptive execution and broadcast joins off (the tests that need
    them set them), no code generation, the JVM's quick compiler only."""
    from neardup_udfs.session import local_session

    warehouse = tempfile.mkdtemp(prefix="neardup-tests-warehouse-")
    session = local_session(
        "neardup-tests",
        {
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.session.timeZone": "UTC",
            # On test-sized inputs adaptive execution costs a Spark job per query stage (a
            # dedup run: 94 jobs with it, about half without) and 25-30 % of the wall time.
            # Results must not depend on it: the partitioning tests turn it back on.
            "spark.sql.adaptive.enabled": "false",
            # Sort-merge joins instead of broadcast ones: a broadcast costs a Spark job of
            # its own, about 8 % of a small dedup run. The partitioning tests turn
            # broadcasts on.
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            # Interpreted expressions instead of generated Java: most of a test-sized
            # query's cost is compiling the generated classes (and the JIT compiling them
            # again), about a quarter of a small dedup run. The e2e tier runs the jobs with
            # code generation.
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.driver.memory": "2g",  # as conf/spark-local.conf
            # The tier is CPU-bound on two cores (1 % idle; a third pytest worker made
            # tests/stages slower, 391 s against 346 s): spark_settings.QUICK_JVM says why
            "spark.driver.extraJavaOptions": QUICK_JVM,
            # the built-in catalog's managed tables (the table tests): never in the checkout
            "spark.sql.warehouse.dir": warehouse,
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    shutil.rmtree(warehouse, ignore_errors=True)
