"""Run by tests/test_library.py in a process of its own (a process holds one kind of
session): ``neardup_udfs.dedup`` and the column functions on a local Spark Connect session.

    python tests/connect_dedup.py INPUT.jsonl[.gz] OUT.json INDEX

Starts a local Spark Connect server on a port the system picks (so two runs on one machine
never meet on a fixed port) and prints ``connect server ready`` once a client session is
connected to it. Writes the results as JSON: for each engine the clusters, kept ids,
removed rows, pairs, rejects and counts; an index query; the edge frames
(``library_rows.edge_rows``: no near-duplicate, empty, partly indexed) on every engine,
alone and against INDEX; the column functions' values of the first rows; the session kind.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from typing import Any

from library_rows import dedup_rows, edge_rows, query_rows, sorted_rows
from spark_settings import QUICK_JVM

SERVER = "org.apache.spark.sql.connect.service.SparkConnectService$"
READY = "connect server ready"
SERVERS: list[Any] = []
"""The classic session of each server this process started (its SparkContext runs the jobs)."""


def stage_tasks() -> dict[str, int]:
    """Stage -> tasks, of every stage of every job the servers' SparkContexts ran so far (job
    ids count up from 0)."""
    found = {}
    for server in SERVERS:
        tracker = server.sparkContext.statusTracker()
        job = 0
        while (info := tracker.getJobInfo(job)) is not None:
            for stage_id in info.stageIds:
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:  # a stage skipped (its shuffle output reused): no tasks
                    found[f"job {job} stage {stage_id}: {stage.name}"] = int(stage.numTasks)
            job += 1
    return found


def connect_session(master: str = "local[2]") -> Any:
    """A Spark Connect client session to a local server this process starts on an ephemeral
    port (what ``SparkSession.builder.remote(master)`` does, without its fixed port 15002)."""
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as RemoteSession

    token = os.environ.setdefault("SPARK_CONNECT_AUTHENTICATE_TOKEN", str(uuid.uuid4()))
    server = (
        SparkSession.builder.master(master)
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.port", "0")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JVM)  # as every JVM the tests start
        .getOrCreate()
    )
    SERVERS.append(server)
    port = getattr(getattr(server._jvm, SERVER), "MODULE$").localPort()
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # columns built from now on are Connect's
    return RemoteSession.builder.remote(f"sc://localhost:{port}/;token={token}").getOrCreate()


def main(src: str, out: str, index: str) -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import neardup_udfs
    from neardup_udfs import functions as nf

    started = time.monotonic()
    spark = connect_session()
    print(f"{READY} in {time.monotonic() - started:.1f} s", flush=True)
    found: dict[str, Any] = {"session": type(spark).__module__}
    lap = time.monotonic()

    def took(what: str) -> None:  # phase times on stderr: the test's log says where time went
        nonlocal lap
        now = time.monotonic()
        print(f"{what}: {now - lap:.1f} s", file=sys.stderr, flush=True)
        lap = now

    df = spark.read.json(src)
    conf_before = dict(spark.conf.getAll)
    for engine in ("spark", "driver"):
        with neardup_udfs.dedup(df, engine=engine, pairs=True) as r:
            found[engine] = {**dedup_rows(r), "spark": r.report["spark"]}
        took(f"dedup on the {engine} engine")
    found["runs_stage_tasks"] = stage_tasks()
    conf_after = dict(spark.conf.getAll)
    found["conf_changed"] = sorted(
        k for k in conf_before.keys() | conf_after.keys() if conf_before.get(k) != conf_after.get(k)
    )
    with neardup_udfs.query_index(df, index, top=3) as q:
        found["query"] = query_rows(q)
    took("query_index")
    spark.conf.set("spark.sql.shuffle.partitions", "4")  # tiny frames: as the classic tests
    found["edges"] = edge_rows(spark, df, index)
    took("edge frames")
    first = df.orderBy("id").limit(20)
    values = first.select(
        "id",
        nf.minhash("text").alias("minhash"),
        nf.simhash("text").alias("simhash"),
        nf.simhash("text", "fingerprint").alias("fingerprint"),
        nf.band_keys(nf.minhash("text")).alias("bands"),
    )
    found["functions"] = sorted_rows(values)
    took("column functions")
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(found, fh)
    print(f"done in {time.monotonic() - started:.1f} s", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
