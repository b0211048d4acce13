"""The engine decision (``engine``): what the Spark properties give a run (cores, the
driver's and the local engine's byte budgets, the driver's edge budget) and which engine a
config may use (no Spark started here)."""

from __future__ import annotations

import os

import pytest

from neardup_udfs import engine
from neardup_udfs.config import ConfigError, load_config


@pytest.mark.parametrize(
    ("settings", "edges", "source"),
    [
        ({}, (1 << 30) // 256, "memory 1g"),  # Spark's defaults: 1g each
        ({"spark.driver.memory": "2g"}, (2 << 30) // 256, "memory 2g"),  # = 1g / 128
        ({"spark.driver.memory": "512m"}, (512 << 20) // 256, "memory 512m"),
        ({"spark.driver.memory": "1024"}, (1024 << 20) // 256, "memory 1024"),  # bare: MiB
        ({"spark.driver.memory": "16g"}, (1 << 30) // 128, "maxResultSize 1g"),
        (
            {"spark.driver.memory": "16g", "spark.driver.maxResultSize": "0"},
            (16 << 30) // 256,
            "memory 16g",
        ),  # 0: no result limit
        ({"spark.driver.memory": "lots"}, (1 << 30) // 256, "memory 1g (unreadable 'lots')"),
    ],
)
def test_driver_edge_budget_follows_the_driver_memory(
    settings: dict[str, str], edges: int, source: str
) -> None:
    """The smaller of the driver's memory / 256 bytes and its result limit / 128 bytes."""
    budget, said = engine.edge_budget(settings)
    assert budget == edges
    assert said == f"spark.driver.{source} / {256 if 'memory' in source else 128} bytes an edge"


def test_driver_cores_follow_the_master() -> None:
    assert engine.cores({"spark.master": "local"}) == 1
    assert engine.cores({"spark.master": "local[3]"}) == 3
    assert engine.cores({"spark.master": "local[2,4]"}) == 2
    assert engine.cores({"spark.master": "local[*]"}) == (os.cpu_count() or 1)
    assert engine.cores({}) == (os.cpu_count() or 1)  # pyspark's default master: local[*]
    assert engine.cores({"spark.master": "yarn", "spark.driver.cores": "4"}) == 4
    assert engine.cores({"spark.master": "yarn"}) == 1


def test_local_budget_is_the_driver_memory() -> None:
    """No result limit applies: nothing is collected through the JVM."""
    assert engine.local_byte_budget({}) == (1 << 30, "spark.driver.memory 1g")
    conf = {"spark.driver.memory": "4g", "spark.driver.maxResultSize": "1m"}
    got = engine.local_byte_budget(conf)
    assert got == (4 << 30, "spark.driver.memory 4g")


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"engine": "local", "clustering": "connected"}, "'local' clusters anchored only"),
        ({"engine": "driver", "clustering": "connected"}, "'driver' clusters anchored only"),
        ({"engine": "driver", "against": "idx"}, "'driver' does not match an index"),
        ({"engine": "local", "input_format": "parquet"}, "'local' reads JSON lines only"),
        ({"engine": "local", "input_table": "db.t", "input": None, "id_col": "id"}, "not a table"),
        ({"engine": "local", "output_table_prefix": "db.out_"}, "writes folders, not tables"),
    ],
)
def test_the_config_refuses_an_engine_that_cannot_run_it(
    settings: dict[str, object], said: str
) -> None:
    """The config check and the decision are one rule: ``load_config`` raises the
    ConfigError ``engine.config_refusal`` names, keyed ``engine``."""
    given = {"input": "in", "output": "out", "input_format": "jsonl", **settings}
    with pytest.raises(ConfigError, match="engine") as raised:
        load_config(**{k: v for k, v in given.items() if v is not None})
    assert said in str(raised.value)


def test_every_engine_runs_a_plain_config() -> None:
    for name in engine.ENGINES:
        cfg = load_config(input="in", output="out", input_format="jsonl", engine=name)
        assert engine.config_refusal(cfg) is None


def test_the_library_refuses_only_the_local_engine() -> None:
    assert "dedup(df) runs on its session" in (engine.library_refusal("local") or "")
    for name in ("auto", "driver", "spark", None):
        assert engine.library_refusal(name) is None


def test_the_needs_and_the_streamed_rows_agree() -> None:
    """A held run needs six bytes a byte of text and 4 KiB a document; a streamed one 256 MiB
    and 768 bytes a document, and a budget of that need holds exactly that many rows."""
    assert engine.held_need(1000, 2) == 6 * 1000 + 2 * 4096
    need = engine.streamed_need(10_000)
    assert need == (256 << 20) + 768 * 10_000
    assert engine.streamed_rows(need) == 10_000
    assert engine.streamed_rows(100) == 0  # below the base: none


def test_a_spark_run_clusters_in_the_core_when_edges_and_members_fit() -> None:
    """Within the edge budget and with every member's bytes within the driver's budget (half
    the smaller of its memory and its result limit, 1g each by default: 512 MiB at 1 KiB a
    member); otherwise, or with no member count, Spark stages."""
    fits = 512 * 1024  # members at 1 KiB each in 512 MiB
    assert engine.cluster_on_driver(10, fits, {}, max_driver_edges=10)
    assert not engine.cluster_on_driver(11, fits, {}, max_driver_edges=10)
    assert not engine.cluster_on_driver(10, fits + 1, {}, max_driver_edges=10)
    assert not engine.cluster_on_driver(0, None, {}, max_driver_edges=10)
    more = {"spark.driver.memory": "2g", "spark.driver.maxResultSize": "2g"}  # 1 GiB
    assert engine.cluster_on_driver(0, 2 * fits, more, max_driver_edges=0)
    assert not engine.cluster_on_driver(0, 2 * fits, {"spark.driver.memory": "2g"}, 0)
