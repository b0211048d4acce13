"""The library API against the job (issue 40): the same dedup of the short dense corpus as
``jobs/dedup.py`` and as ``neardup_udfs.dedup`` on a DataFrame, on a classic session
(spark-submit) and on a local Spark Connect session, each a whole process.

    .venv/bin/python bench/bench_library.py [--runs 3]

Systems, each with Spark's defaults (``--master local[2] --driver-memory 2g``, no
properties file):
- ``job``: ``jobs/dedup.py`` on the JSON lines, engine ``auto`` (the local engine here);
- ``job-driver``: the same with ``--engine driver`` (Spark reads and writes, the core in
  the driver), which is what ``dedup(df)`` picks under ``auto``;
- ``api``: this script under spark-submit (``--api-only``): ``spark.read.json``, then
  ``neardup_udfs.dedup``, the kept rows written as Parquet;
- ``connect``: this script under the venv's Python (``--connect-only``): the same on
  ``SparkSession.builder.remote("local[2]")`` (a local Connect server started by the run).
One untimed warm-up of each, then ``--runs`` rounds of all four in turn. Prints each run,
the medians, each system's ratio to ``job-driver`` round by round, one JSON line, and
checks that every system kept the same number of documents. Working files go to
out/bench_library/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lib.processes import SPARK_ARGS, spark_submit, timed_process
from lib.short_corpus import load_or_build

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "out" / "bench_library"
SYSTEMS = ("job", "job-driver", "api", "connect")


def _dedup_frame(spark: Any, corpus: str, out: str) -> None:
    """``neardup_udfs.dedup`` of ``corpus`` on ``spark``; kept rows to ``out``/kept, the
    counts and seconds to ``out``/counts.json."""
    import neardup_udfs

    started = time.perf_counter()
    df = spark.read.json(corpus)
    with neardup_udfs.dedup(df, id_col="doc_id", text_col="text") as result:
        result.kept.write.mode("overwrite").parquet(os.path.join(out, "kept"))
        counts = dict(result.counts, seconds=round(time.perf_counter() - started, 2),
                      engine=result.report["engine"]["engine"])  # fmt: skip
    Path(out, "counts.json").write_text(json.dumps(counts), "utf-8")


def on_session(corpus: str, out: str, connect: bool) -> int:
    """``_dedup_frame`` on a session of its own: spark-submit's (classic), or a local Spark
    Connect server's."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    builder = builder.remote("local[2]") if connect else builder.appName("neardup-bench-api")
    spark = builder.getOrCreate()
    try:
        _dedup_frame(spark, corpus, out)
    finally:
        spark.stop()
    return 0


def command(system: str, corpus: Path, out: Path) -> list[str]:
    me = str(Path(__file__).resolve())
    if system == "api":
        return [spark_submit(), *SPARK_ARGS, me, "--api-only", str(corpus), str(out)]
    if system == "connect":
        return [sys.executable, me, "--connect-only", str(corpus), str(out)]
    engine = ["--engine", "driver"] if system == "job-driver" else []
    return [spark_submit(), *SPARK_ARGS, str(ROOT / "jobs" / "dedup.py"),
            "--config", str(ROOT / "conf" / "dedup.toml"), "--input", str(corpus),
            "--input-format", "jsonl", "--id-col", "doc_id", "--text-col", "text",
            "--output", str(out), *engine]  # fmt: skip


def kept_of(system: str, out: Path) -> int:
    if system in ("api", "connect"):
        return int(json.loads((out / "counts.json").read_text())["kept"])
    return int(json.loads((out / "report.json").read_text())["counts"]["kept"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--min-free-gb", type=float, default=2.0)
    p.add_argument("--api-only", nargs=2, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    p.add_argument("--connect-only", nargs=2, metavar=("CORPUS", "OUT"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.api_only:
        return on_session(*args.api_only, connect=False)
    if args.connect_only:
        return on_session(*args.connect_only, connect=True)
    corpus = load_or_build()
    WORK.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    kept: dict[str, int] = {}
    for index in range(args.runs + 1):  # round 0: the warm-up
        for system in SYSTEMS:
            out = WORK / system
            run = timed_process(system, command(system, corpus.path, out), index, args,
                                args.timeout)  # fmt: skip
            if run.rc != 0:
                print(f"{system} failed (exit {run.rc}); see {run.log}", file=sys.stderr)
                return 1
            kept[system] = kept_of(system, out)
            if index:
                seconds[system].append(run.seconds)
    if len(set(kept.values())) != 1:
        print(f"the systems kept different documents: {kept}", file=sys.stderr)
        return 1
    base = seconds["job-driver"]
    result: dict[str, Any] = {"docs": len(corpus.docs), "kept": kept["job"], "runs": args.runs}
    print(f"short dense corpus: {len(corpus.docs)} documents, {kept['job']} kept by every system")
    for system in SYSTEMS:
        ratios = [a / b for a, b in zip(seconds[system], base, strict=True)]
        median, ratio = statistics.median(seconds[system]), statistics.median(ratios)
        result[system] = {"seconds": seconds[system], "median": round(median, 2),
                          "vs_job_driver": round(ratio, 3)}  # fmt: skip
        runs = ", ".join(f"{s:.1f}" for s in seconds[system])
        print(f"{system:<11} {median:7.1f} s median ({runs}); / job-driver {ratio:.2f}x")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
