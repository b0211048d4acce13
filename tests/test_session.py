"""``neardup_udfs.session``: shuffle partitions fitted to the input, lineage cuts, Spark jobs
counted."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from neardup_udfs import session
from neardup_udfs.config import load_config
from neardup_udfs.engine import edge_budget
from neardup_udfs.runs import dedup as dedup_run
from neardup_udfs.session import (
    ADAPTIVE,
    SHUFFLE_PARTITIONS,
    SMALL_INPUT_BYTES,
    JobCount,
    fit_adaptive,
    fit_shuffle_partitions,
    run_settings,
)
from tests.spark_settings import spark_conf

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.spark
def test_a_chosen_count_stands(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    df = spark.range(10)
    assert fit_shuffle_partitions(spark, df) == {
        "shuffle_partitions": 2,
        "shuffle_partitions_from": "config",  # the test session's builder sets 2
    }
    with spark_conf(spark, **{SHUFFLE_PARTITIONS: "7"}):
        assert fit_shuffle_partitions(spark, df)["shuffle_partitions"] == 7
        assert spark.conf.get(SHUFFLE_PARTITIONS) == "7"


@pytest.mark.spark
def test_an_unchosen_count_follows_the_input_size(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": "x" * 90}) + "\n" for _ in range(1000)))
    size = path.stat().st_size  # about 100 KB
    monkeypatch.setattr(session, "_chosen_by_user", lambda spark: False)
    floor = 2 * spark.sparkContext.defaultParallelism
    with spark_conf(spark, **{SHUFFLE_PARTITIONS: "200"}):
        got = fit_shuffle_partitions(spark, spark.read.json(str(path)))
        assert got == {"shuffle_partitions": floor, "shuffle_partitions_from": "input size"}
        assert spark.conf.get(SHUFFLE_PARTITIONS) == str(floor)
        monkeypatch.setattr(session, "BYTES_PER_PARTITION", 10_000)
        got = fit_shuffle_partitions(spark, spark.read.json(str(path)))
        assert got["shuffle_partitions"] == -(-size // 10_000) > floor
        # a source of unknown size (an RDD's rows) gets the floor
        rows = spark.createDataFrame(spark.sparkContext.parallelize([(1,)] * 10), "x int")
        assert fit_shuffle_partitions(spark, rows)["shuffle_partitions"] == floor


def test_stated_bytes_reads_the_root_estimate_of_a_cost_explain() -> None:
    """A Spark Connect client sees plan statistics only as the server's explain text."""
    explained = (
        "== Optimized Logical Plan ==\n"
        "Project [id#8, text#9], Statistics(sizeInBytes=134.3 KiB)\n"
        "+- Relation [id#8,text#9] json, Statistics(sizeInBytes=2.0 MiB)\n"
    )
    assert session.stated_bytes(explained) == math.ceil(134.3 * 1024)
    assert session.stated_bytes("Statistics(sizeInBytes=48.0 B, rowCount=1)") == 48
    assert session.stated_bytes("Statistics(sizeInBytes=8.0 EiB)") >= session.UNKNOWN_SIZE
    assert session.stated_bytes("no statistics here") == session.UNKNOWN_SIZE


def test_default_parallelism_on_connect_is_the_chosen_one_else_the_master_s_cores() -> None:
    from fake_spark import FakeConnectSession

    assert session.is_connect(FakeConnectSession({}))  # type: ignore[arg-type]
    for values, expected in (
        ({"spark.master": "local[3]"}, 3),
        ({"spark.master": "local[3]", "spark.default.parallelism": "12"}, 12),
        ({"spark.master": "spark://host:7077", "spark.driver.cores": "5"}, 5),
        ({"spark.master": "local[2]", "spark.default.parallelism": "none"}, 2),
    ):
        assert session.default_parallelism(FakeConnectSession(values)) == expected, values  # type: ignore[arg-type]


@pytest.mark.spark
def test_plan_bytes_is_the_optimizer_s_estimate(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """On a classic session the plan's statistics; what a cost explain (a Connect client's
    only view) states of the same plan agrees to its rounding."""
    path = tmp_path / "docs.jsonl"
    lines = (json.dumps({"id": str(i), "text": "x" * 90}) + "\n" for i in range(2000))
    path.write_text("".join(lines))
    df = spark.read.json(str(path))
    exact = session.plan_bytes(df)
    assert 0 < exact < session.UNKNOWN_SIZE
    explained = spark._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(), "cost")
    assert abs(session.stated_bytes(explained) - exact) <= exact / 100
    unknown = spark.createDataFrame(spark.sparkContext.parallelize([(1,)] * 10), "x int")
    assert session.plan_bytes(unknown) >= session.UNKNOWN_SIZE


@pytest.mark.spark
def test_a_given_size_beats_the_plan_estimate(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The listed bytes of the input files decide, not the plan's estimate after projection
    (which put an 8.1 MB JSON file at 266 KB)."""
    monkeypatch.setattr(session, "_chosen_by_user", lambda spark, key=SHUFFLE_PARTITIONS: False)
    floor = 2 * spark.sparkContext.defaultParallelism
    with spark_conf(spark, **{SHUFFLE_PARTITIONS: "200"}):
        got = fit_shuffle_partitions(spark, spark.range(10), 7 * session.BYTES_PER_PARTITION)
        assert got["shuffle_partitions"] == max(7, floor)
        monkeypatch.setattr(session, "BYTES_PER_PARTITION", 10)
        got = fit_shuffle_partitions(spark, spark.range(10), 1000)
        assert got == {"shuffle_partitions": 100, "shuffle_partitions_from": "input size"}


@pytest.mark.spark
def test_adaptive_execution_off_for_a_small_input_unless_chosen(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # the test session's builder turns it off: that choice stands, whatever the size
    assert fit_adaptive(spark, 10) == {"adaptive": False, "adaptive_from": "config"}
    with spark_conf(spark, **{ADAPTIVE: "true"}):  # a choice at runtime stands too
        assert fit_adaptive(spark, 10) == {"adaptive": True, "adaptive_from": "config"}
        monkeypatch.setattr(session, "_chosen_by_user", lambda spark, key=ADAPTIVE: False)
        big = fit_adaptive(spark, SMALL_INPUT_BYTES + 1)
        assert big == {"adaptive": True, "adaptive_from": "input size"}
        assert spark.conf.get(ADAPTIVE) == "true"
        with run_settings(spark):
            small = fit_adaptive(spark, SMALL_INPUT_BYTES)
            assert small == {"adaptive": False, "adaptive_from": "input size"}
            assert spark.conf.get(ADAPTIVE) == "false"
            spark.conf.set(SHUFFLE_PARTITIONS, "13")
        # the run's settings end with it: a later run fits its own input again
        assert spark.conf.get(ADAPTIVE) == "true" and spark.conf.get(SHUFFLE_PARTITIONS) == "2"


@pytest.mark.spark
def test_jobs_are_counted_in_a_group_of_their_own(spark) -> None:  # type: ignore[no-untyped-def]
    sc = spark.sparkContext
    sc.setJobGroup("callers-group", "the caller's")
    jobs = JobCount()
    jobs.start(spark, "counted")
    for _ in range(3):
        sc.parallelize([1, 2, 3]).count()  # one Spark job each
    assert jobs.count(spark) == 3
    jobs.stop(spark)
    jobs.stop(spark)  # once only
    assert sc.getLocalProperty("spark.jobGroup.id") == "callers-group"
    sc.parallelize([1]).count()
    assert jobs.count(spark) == 3
    sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


@pytest.mark.spark
def test_reliable_lineage_cuts_where_a_checkpoint_directory_is_set(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """checkpoint_dir: every cut of the run is a reliable checkpoint there (files appear),
    the report says so, the clusters equal those of local cuts, and the session's own
    checkpoint directory is given back afterwards."""
    before = spark.sparkContext.getCheckpointDir()
    runs = {}
    for name, where in (("local", None), ("checkpoint", str(tmp_path / "ck"))):
        out = tmp_path / name
        cfg = load_config(
            input=str(ROOT / "samples"), output=str(out), checkpoint_dir=where,
            clustering="connected",  # cuts every round, whatever the graph's size
        )  # fmt: skip
        dedup_run.run(spark, cfg)
        report = json.loads((out / "report.json").read_text())
        assert report["spark"]["lineage_cuts"] == name
        runs[name] = sorted(pq.read_table(out / "clusters").to_pylist(), key=lambda r: r["doc_id"])
    assert runs["local"] == runs["checkpoint"]
    written = [p for p in (tmp_path / "ck").rglob("*") if p.is_file()]
    assert written, "no checkpoint file was written"
    assert spark.sparkContext.getCheckpointDir() == before


@pytest.mark.spark
def test_report_says_which_cluster_path_ran_and_why(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Unset max_driver_edges: the driver's memory sets the budget and a small graph is
    settled there with no round; max_driver_edges = 0: rounds, the same clusters."""
    runs = {}
    for name, limit in (("driver", None), ("rounds", 0)):
        out = tmp_path / name
        cfg = load_config(
            input=str(ROOT / "samples"), output=str(out), max_driver_edges=limit, engine="spark"
        )
        dedup_run.run(spark, cfg)
        runs[name] = json.loads((out / "report.json").read_text())["cluster"]
        runs[name + "-clusters"] = sorted(
            pq.read_table(out / "clusters").to_pylist(), key=lambda r: r["doc_id"]
        )
    assert runs["driver"]["path"] == "driver" and runs["driver"]["rounds"] == 0
    assert runs["driver"]["budget_from"].startswith("spark.driver.memory")
    assert runs["driver"]["driver_edge_budget"] == edge_budget(session.conf_of(spark))[0]
    assert runs["rounds"]["path"] == "rounds, then the driver" and runs["rounds"]["rounds"] >= 1
    assert runs["rounds"]["budget_from"] == "max_driver_edges"
    assert runs["rounds"]["driver_edge_budget"] == 0
    assert runs["driver-clusters"] == runs["rounds-clusters"]
