"""The containment stage on Spark (``stages.containment``): the same decisions, row for row,
as the driver's (``driver.containment``), whatever the partitioning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from dedup_runs import run_dedup
from engine_corpus import TABLES, engine_corpus, with_excerpts
from pyspark.sql import functions as F
from spark_settings import spark_conf

from neardup_udfs.config import load_config
from neardup_udfs.schemas import CONTAINMENT
from neardup_udfs.stages.containment import contain


def _tables(out: Path) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for name in TABLES:
        table = pq.read_table(out / name)
        rows = sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))
        got[name] = (table.schema.names, rows)
    return got


@pytest.mark.spark
def test_spark_containment_equals_the_driver_s_under_any_partitioning(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path
) -> None:
    """The earliest rule (an order column with nulls and ties), every partitioning knob moved
    at once on the Spark run: the same clusters, pairs, docs, samples and counts."""
    src = with_excerpts(engine_corpus(tmp_path / "base.jsonl"), tmp_path / "corpus.jsonl")
    keys = {"containment": 0.8, "representative": "earliest", "order_col": "crawl"}
    run_dedup(spark, src, tmp_path / "driver", engine="driver", **keys)
    moved = {
        "spark.sql.shuffle.partitions": "5",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.autoBroadcastJoinThreshold": "10485760",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "16",
        "spark.sql.files.maxPartitionBytes": "4096",
    }
    with spark_conf(spark, **moved):
        run_dedup(spark, src, tmp_path / "spark", engine="spark", **keys)
    driver, on_spark = _tables(tmp_path / "driver"), _tables(tmp_path / "spark")
    for name in TABLES:
        assert on_spark[name] == driver[name], name
    contained = [r for r in driver["clusters"][1] if r["relation"] == CONTAINMENT]
    assert len(contained) >= 9
    # most of a page in HTML, longer than the page's text, kept by the rule: turned round
    by_id = {r["doc_id"]: r for r in driver["clusters"][1]}
    page = by_id["a-most-html"]["cluster_id"]
    assert by_id["a-most-html"]["relation"] == CONTAINMENT and by_id[page]["is_representative"]
    reports = [json.loads((tmp_path / e / "report.json").read_text()) for e in ("driver", "spark")]
    assert reports[0]["engine"]["engine"] == "driver" and reports[1]["engine"]["engine"] == "spark"
    assert reports[0]["counts"] == {**reports[1]["counts"], "driver_edges": reports[0]["counts"][
        "driver_edges"], "rounds": reports[0]["counts"]["rounds"]}  # fmt: skip
    assert reports[1]["counts"]["contained"] == len(contained)
    assert "containment" in reports[1]["seconds"]


@pytest.mark.spark
def test_contain_moves_an_excerpt_and_its_near_duplicate_to_the_container(spark) -> None:  # type: ignore[no-untyped-def]
    """``contain`` on its own: the excerpt and the member removed in its favour move to the
    container, each with its own containment; the short teaser takes no part."""
    words = [f"w{i}" for i in range(200)]
    texts = {"long": words, "ex": words[20:120], "near": words[20:119] + ["x"],
             "teaser": words[:10], "other": [f"v{i}" for i in range(80)]}  # fmt: skip
    frame = spark.createDataFrame(
        [(k, " ".join(v)) for k, v in texts.items()], "doc_id string, text string"
    )
    rows = [("long", "long", True, 1.0), ("ex", "ex", True, 1.0), ("near", "ex", False, 0.97),
            ("teaser", "teaser", True, 1.0), ("other", "other", True, 1.0)]  # fmt: skip
    clusters = spark.createDataFrame(
        rows, "doc_id string, cluster_id string, is_representative boolean, similarity double"
    )
    info = frame.select(
        "doc_id",
        F.col("doc_id").alias("leader"),
        F.lit(0).alias("__length"),
        F.lit(None).cast("int").alias("__order"),
    )
    config = load_config(input="x", output="y")
    done = contain(clusters, frame, info, config.pipeline(), threshold=0.8, min_shingles=20,
                   rule="min_id")  # fmt: skip
    got = {r.doc_id: r for r in done.clusters.collect()}
    assert (got["ex"].cluster_id, got["ex"].relation) == ("long", CONTAINMENT)
    assert got["ex"].similarity == pytest.approx(1.0)
    assert (got["near"].cluster_id, got["near"].relation) == ("long", CONTAINMENT)
    assert got["near"].similarity == pytest.approx(97 / 98)  # "x" makes one foreign shingle
    assert got["teaser"].relation is None and got["long"].is_representative
    pairs = {(r.a, r.b) for r in done.pairs.collect()}
    assert pairs == {("ex", "long"), ("near", "long")}
    assert done.counts["containment_pairs"] == 1 and done.counts["containment_kept"] == 0
