"""neardup as a PySpark library (``neardup_udfs.dedup``, ``neardup_udfs.library``): the
same rows as the dedup job on the same real texts, on a classic and on a Spark Connect
session; nothing cached or changed in the session after ``release``; bad arguments refused
by name before any Spark job; metastore tables in and out of the job."""

from __future__ import annotations

import functools
import gc
import gzip
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pyspark
import pytest
from library_rows import (
    AGAINST_ENGINES,
    EDGE_ENGINES,
    against_rows,
    dedup_rows,
    edge_rows,
    query_rows,
    sorted_rows,
)

import neardup_udfs
from neardup_udfs import functions as nf
from neardup_udfs.config import load_config, load_fingerprint_config, load_index_config
from neardup_udfs.io.frames import RESERVED, check_columns
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.tables import WRITTEN_BY
from neardup_udfs.library import frame_config
from neardup_udfs.runs import dedup as dedup_run
from neardup_udfs.runs import fingerprint as fingerprint_run
from neardup_udfs.runs import index as index_run
from neardup_udfs.runs.local import try_local
from neardup_udfs.settings import ConfigError, DeprecatedKey

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "text" / "debian_copyright.jsonl.gz"
FOLDERS = ("docs", "clusters", "pairs", "rejects")

pytestmark = pytest.mark.spark


def _parquet_rows(path: Path, columns: list[str] | None = None) -> list[list[Any]]:
    table = pq.read_table(path, columns=columns)
    return sorted([list(r.values()) for r in table.to_pylist()], key=repr)


@pytest.fixture(scope="module")
def real(spark):  # type: ignore[no-untyped-def]
    """The 416 real Debian copyright texts (tests/data/text/README.txt) as a DataFrame."""
    return spark.read.json(str(REAL))


CLASSIC = ("api_results", "query_results", "edge_results")
"""The classic session's rows the Connect test compares its own with."""


@functools.cache
def _classic_key() -> str:
    """The key of the classic rows in pytest's cache: a digest of all they depend on (the
    package, this module and its helpers, the session's settings, the texts, Spark), read
    once per process."""
    digest = hashlib.sha256(pyspark.__version__.encode())
    sources = [*(ROOT / "neardup_udfs").rglob("*.py"), *(ROOT / "neardup_udfs").rglob("*.json")]
    helpers = [ROOT / "tests" / n for n in ("conftest.py", "library_rows.py", "engine_corpus.py")]
    for path in sorted([*sources, *helpers, Path(__file__), REAL, ROOT / "conf" / "dedup.toml"]):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return f"neardup/classic-rows/{digest.hexdigest()[:24]}"


def _stored(request: pytest.FixtureRequest, value: Any) -> Any:
    """``value``, the rows of the fixture ``request`` computes, also kept in pytest's cache
    for the end-to-end tier's Connect test (make test runs before make test-e2e), unless
    pytest runs without its cache (``-p no:cacheprovider``)."""
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        cache.set(f"{_classic_key()}/{request.fixturename}", value)
    return value


@pytest.fixture(scope="module")
def api_results(real, request) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """``dedup`` of the real texts on each engine, as plain rows."""
    found = {}
    for engine in ("spark", "driver"):
        with neardup_udfs.dedup(real, engine=engine, pairs=True) as r:
            found[engine] = {**dedup_rows(r), "report": r.report}
    return _stored(request, found)


def test_engines_agree_and_every_row_is_accounted_for(api_results) -> None:  # type: ignore[no-untyped-def]
    spark_run, driver_run = api_results["spark"], api_results["driver"]
    for key in ("clusters", "kept", "removed", "pairs", "rejects"):
        assert spark_run[key] == driver_run[key], key
    counts = spark_run["counts"]
    assert counts["input"] == 416 == counts["kept"] + counts["removed"] + counts["rejected"]
    assert counts["removed"] > 100 and counts["exact_duplicates"] > 100  # a dense set
    assert len(spark_run["kept"]) == counts["kept"]
    assert len(spark_run["removed"]) == counts["removed"]
    assert spark_run["kept_columns"] == ["id", "text"]  # the caller's columns, no doc_id
    report = spark_run["report"]
    assert report["pipeline"]["id"] == "web/1+semblance/1;bands=25,k=125,rows=5"
    assert report["engine"]["engine"] == "spark"
    assert api_results["driver"]["report"]["engine"]["engine"] == "driver"
    # each removed row names the kept row in its place
    kept = {r[0] for r in spark_run["kept"]}
    assert all(rep in kept and doc not in kept for doc, rep, _ in spark_run["removed"])


def test_the_job_gives_the_same_rows_as_the_api(spark, api_results, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The dedup job on the same texts as files, on Spark stages and on the local engine
    (which reads uncompressed JSON lines)."""
    expected = api_results["spark"]
    src = tmp_path / "copyrights.jsonl"
    src.write_bytes(gzip.decompress(REAL.read_bytes()))
    for engine in ("spark", "local"):
        out = tmp_path / engine
        config = load_config(str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out),
                             input_format="jsonl", id_col="id", engine=engine,
                             outputs=FOLDERS)  # fmt: skip
        if engine == "local":
            assert try_local(config) is not None
        else:
            dedup_run.run(spark, config)
        assert _parquet_rows(out / "clusters") == expected["clusters"], engine
        assert _parquet_rows(out / "pairs") == expected["pairs"], engine
        assert _parquet_rows(out / "rejects") == expected["rejects"], engine
        assert _parquet_rows(out / "docs", ["id"]) == expected["kept"], engine
        counts = json.loads((out / "report.json").read_text())["counts"]
        assert counts == expected["counts"], engine


@pytest.fixture(scope="module")
def index(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """An index (jobs/index.py build) of every other real text, its batch named (not after
    its temporary path): the rows that name it are the same in every run."""
    root = tmp_path_factory.mktemp("index")
    lines = gzip.decompress(REAL.read_bytes()).decode("utf-8").splitlines()
    src = root / "half.jsonl"
    src.write_text("\n".join(lines[::2]) + "\n", encoding="utf-8")
    config = load_index_config(str(ROOT / "conf/dedup.toml"), action="build",
                               index=str(root / "index"), input=str(src), input_format="jsonl",
                               id_col="id", batch_id="half")  # fmt: skip
    index_run.run(spark, config)
    return root / "index"


@pytest.fixture(scope="module")
def against_results(real, index: Path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    with neardup_udfs.dedup(real, engine="spark", against=str(index)) as r:
        return against_rows(r)


@pytest.fixture(scope="module")
def query_results(real, index: Path, request) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    with neardup_udfs.query_index(real, str(index), top=3) as q:
        return _stored(request, query_rows(q))


def test_query_index_gives_the_index_jobs_results(  # type: ignore[no-untyped-def]
    spark, query_results, index: Path, tmp_path: Path
) -> None:
    out = tmp_path / "query"
    config = load_index_config(str(ROOT / "conf/dedup.toml"), action="query", index=str(index),
                               input=str(REAL), input_format="jsonl", id_col="id",
                               output=str(out), top=3)  # fmt: skip
    index_run.run(spark, config)
    assert query_results["results"] == _parquet_rows(out / "results")
    counts = query_results["counts"]
    assert counts["queries"] == counts["input"] == 416 and counts["index_documents"] == 208
    best = {r[0]: r[3] for r in query_results["results"] if r[1] == 1}
    indexed = {json.loads(line)["id"] for line in gzip.open(REAL, "rt").readlines()[::2]}
    assert indexed <= best.keys()  # every indexed text finds something
    # semblance's Forest ranks by shared prefix depth, not by similarity: an indexed text
    # need not come first, but almost all do (197 of 208 here; the job gives the same rows)
    assert sum(best[doc] == 1.0 for doc in indexed) >= 190
    with pytest.raises(InputError, match="no index at"):
        neardup_udfs.query_index(spark.createDataFrame([], "id string, text string"),
                                 str(tmp_path / "none"))  # fmt: skip


def test_against_an_index_removes_the_indexed_texts(against_results) -> None:  # type: ignore[no-untyped-def]
    counts = against_results["counts"]
    assert counts["index_matches"] >= 200  # every indexed text is in the frame again
    assert counts["kept"] + counts["removed"] + counts["rejected"] == counts["input"] == 416
    matched = {row[0] for row in against_results["matches"]}
    kept = {row[0] for row in against_results["kept"]}
    assert matched and not matched & kept


@pytest.fixture(scope="module")
def edge_results(spark, real, index: Path, request) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """``library_rows.edge_rows`` on the classic session."""
    return _stored(request, edge_rows(spark, real, str(index)))


@pytest.fixture(scope="module")
def classic(request) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """:data:`CLASSIC`'s rows by name: as this checkout's fast tier computed them, from
    pytest's cache, when nothing they depend on changed since (see :func:`_classic_key`);
    else (or without the cache) computed here."""
    key, cache = _classic_key(), getattr(request.config, "cache", None)
    found = {name: cache and cache.get(f"{key}/{name}", None) for name in CLASSIC}
    return {name: request.getfixturevalue(name) if v is None else v for name, v in found.items()}


def test_edge_frames_run_on_every_engine(edge_results) -> None:  # type: ignore[no-untyped-def]
    """No near-duplicate, no row, or some rows indexed: each engine keeps what it must."""
    for engine in EDGE_ENGINES:
        alone = edge_results[f"no_duplicate/{engine}"]
        assert alone["counts"]["kept"] == 3 and alone["removed"] == alone["pairs"] == []
        assert edge_results[f"empty/{engine}"]["counts"]["input"] == 0
    for engine in AGAINST_ENGINES:
        assert edge_results[f"empty/{engine}/against"]["counts"]["input"] == 0
        some = edge_results[f"some_indexed/{engine}/against"]
        assert len(some["matches"]) >= 15 and some == edge_results["some_indexed/spark/against"]
        kept = {row[0] for row in some["kept"]}
        assert kept and not kept & {row[0] for row in some["matches"]}


CONNECT_START_SECONDS = 240
"""How long the Connect process may take to start its server and connect to it."""
CONNECT_RUN_SECONDS = 1200
"""How long its runs may take once connected (a loaded machine: CI beside other work)."""


@pytest.mark.e2e  # a server process of its own and a second session: the end-to-end tier
@pytest.mark.timeout(CONNECT_START_SECONDS + CONNECT_RUN_SECONDS + 600)
def test_connect_session_gives_the_same_rows_as_a_classic_one(  # type: ignore[no-untyped-def]
    classic, index: Path, tmp_path: Path
) -> None:
    """A local Spark Connect session (in a process of its own, its server on a port the
    system picks): the same rows on both engines, on the edge frames on every engine alone
    and against an index, and the column functions the same values as the kernels."""
    try:  # what pyspark[connect] adds (pyproject.toml asks for it: CI never skips)
        import google.protobuf  # noqa: F401
        import grpc  # noqa: F401
        import grpc_status  # noqa: F401
    except ImportError as e:
        pytest.skip(f"pyspark's Connect client is not installed (pyspark[connect]): {e}")
    out = tmp_path / "connect.json"
    found = json.loads(_connect_run(REAL, out, index).read_text())
    assert found["session"].startswith("pyspark.sql.connect")
    assert found["conf_changed"] == []  # two runs released: the session's conf as before
    # fitted to the size the server's plan statistics tell, before the first pass: no stage
    # of the two runs has Spark's default 200 tasks (416 rows on 4 partitions: a union of
    # three such frames has 12)
    assert max(found["runs_stage_tasks"].values()) <= 16, found["runs_stage_tasks"]
    for engine in ("spark", "driver"):
        said = found[engine]["spark"]
        assert said["shuffle_partitions_from"] == "input size" and said["jobs"] is None
        assert said["shuffle_partitions"] == 4  # 2 x local[2]: the floor of a 134 KiB input
        rows = classic["api_results"][engine]
        for key in ("clusters", "kept", "kept_columns", "removed", "pairs", "rejects", "counts"):
            assert found[engine][key] == rows[key], (engine, key)
    assert found["query"] == classic["query_results"]
    assert found["edges"] == classic["edge_results"]
    texts = {}
    for line in gzip.open(REAL, "rt", encoding="utf-8"):
        row = json.loads(line)
        texts[row["id"]] = row["text"]
    semblance = neardup_udfs.resolve("semblance")
    for doc_id, minhash, simhash, fingerprint, bands in found["functions"]:
        text = texts[doc_id]
        sig = neardup_udfs.signature(text)
        assert [v & (2**64 - 1) for v in minhash] == sig.tolist()
        assert simhash & (2**64 - 1) == neardup_udfs.fingerprint(text)
        assert fingerprint & (2**64 - 1) == neardup_udfs.fingerprint(text, "fingerprint")
        expected_bands = semblance.band_keys_batch(sig.reshape(1, -1))[0].tolist()
        assert [v & (2**64 - 1) for v in bands] == expected_bands


def _session_state(spark) -> tuple[set[int], dict[str, str], Any]:  # type: ignore[no-untyped-def]
    """The persisted RDDs' ids, the session's conf and this thread's job group."""
    sc = spark.sparkContext
    return (
        {int(i) for i in sc._jsc.getPersistentRDDs().keySet()},
        dict(spark.conf.getAll),
        sc.getLocalProperty("spark.jobGroup.id"),
    )


def test_two_runs_released_leave_nothing_behind(spark, real) -> None:  # type: ignore[no-untyped-def]
    before = _session_state(spark)
    first = neardup_udfs.dedup(real, engine="spark")
    second = neardup_udfs.dedup(real, engine="driver", threshold=0.8)
    assert first._cache.frames and second._cache.frames  # held until released
    assert _session_state(spark)[1:] == before[1:]  # settings back as soon as it returns
    assert _session_state(spark)[0] - before[0]  # ... while the frames stay persisted
    assert first.kept.count() == first.counts["kept"]  # usable while held
    first.release()
    second.release()
    assert not first._cache.frames and not second._cache.frames
    after = _session_state(spark)
    assert after[1:] == before[1:]
    # local checkpoints (lineage cuts) go when their frames are collected: wait for that
    deadline = time.monotonic() + 60
    while after[0] - before[0] and time.monotonic() < deadline:
        gc.collect()
        spark.sparkContext._jvm.System.gc()
        time.sleep(0.5)
        after = _session_state(spark)
    assert after[0] - before[0] == set()  # nothing this test's runs persisted is left


def _no_job_runs(spark, call) -> Exception:  # type: ignore[no-untyped-def]
    """The exception ``call()`` raises, asserting it launched no Spark job."""
    sc = spark.sparkContext
    group = "neardup-test-bad-arguments"
    sc.setJobGroup(group, "bad arguments")
    try:
        with pytest.raises((ConfigError, InputError)) as err:
            call()
        assert list(sc.statusTracker().getJobIdsForGroup(group)) == []
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
    return err.value


@pytest.mark.parametrize(
    ("columns", "kwargs", "message"),
    [
        ("id string, body string", {}, "text_col 'text' is not a column of the DataFrame"),
        ("id string, text string", {"id_col": "url"}, "id_col 'url' is not a column"),
        ("id string, text binary", {}, "text_col 'text' is binary, not a string column"),
        ("id string, text int", {}, "text_col 'text' is int, not a string"),
        ("id array<int>, text string", {}, "id_col 'id' is array<int>: ids are plain values"),
        ("id string, text string, reason string", {}, "column 'reason' is reserved"),
        ("id string, text string, doc_id string", {}, "column 'doc_id' is reserved"),
        ("id string, text string", {"colour": "red"}, "unknown config key 'colour'"),
        ("id string, text string", {"threshold": 2.0}, "config key 'threshold': must be in"),
        ("id string, text string", {"output": "/tmp/x"}, "output: not a setting of dedup(df)"),
        ("id string, text string", {"engine": "local"}, "engine: 'local' reads JSON-lines"),
        ("id string, text string", {"representative": "earliest"}, "config key 'order_col'"),
        (
            "id string, text string",
            {"representative": "earliest", "order_col": "seen"},
            "order_col 'seen' is not a column",
        ),
        ("id string, text string", {"update_index": True}, "batch_id: update_index"),
    ],
)
def test_bad_arguments_are_named_before_any_spark_job(  # type: ignore[no-untyped-def]
    spark, columns: str, kwargs, message: str
) -> None:
    df = spark.createDataFrame([], columns)
    err = _no_job_runs(spark, lambda: neardup_udfs.dedup(df, **kwargs))
    assert message in str(err)


def test_not_a_dataframe_is_named(spark) -> None:  # type: ignore[no-untyped-def]
    err = _no_job_runs(spark, lambda: neardup_udfs.dedup([("a", "b")]))  # type: ignore[arg-type]
    assert "expected a pyspark DataFrame, got list" in str(err)


def test_rejects_and_the_callers_columns(spark) -> None:  # type: ignore[no-untyped-def]
    base = "the quick brown fox jumps over the lazy dog near the river bank today "
    rows = [
        (1, base * 3, "2024-01-02", 7),
        (2, base * 3 + "again", "2024-01-01", 8),  # near 1, seen earlier
        (3, "something else entirely, nothing like the others at all " * 3, None, 9),
        (3, "a repeated id", None, 10),
        (None, "no id", None, 11),
        (5, None, None, 12),
    ]
    df = spark.createDataFrame(rows, "url long, body string, seen string, extra int")
    with neardup_udfs.dedup(df, id_col="url", text_col="body", representative="earliest",
                            order_col="seen") as r:  # fmt: skip
        assert r.kept.columns == df.columns
        assert sorted_rows(r.kept.select("url")) == [[2], [3]]  # the earliest copy kept
        assert sorted_rows(r.removed.select("doc_id", "representative")) == [["1", "2"]]
        assert sorted(sorted_rows(r.rejects), key=str) == sorted(
            [["3", "duplicate doc_id"], [None, "null doc_id"], ["5", "null text"]], key=str
        )
        assert r.counts["input"] == 6 and r.counts["rejected"] == 3
        assert r.pairs is None and r.matches is None


def test_empty_frame_gives_an_empty_result(spark) -> None:  # type: ignore[no-untyped-def]
    with neardup_udfs.dedup(spark.createDataFrame([], "id string, text string")) as r:
        assert r.counts["input"] == 0 and r.kept.count() == 0


def test_job_reads_and_writes_metastore_tables(spark, api_results, real, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real.write.mode("overwrite").saveAsTable("copyrights")
    prefix = "nd_"

    def job(**settings: Any) -> dict[str, Any]:
        out = tmp_path / "out"
        config = load_config(str(ROOT / "conf/dedup.toml"), output=str(out), id_col="id",
                             input_table="copyrights", output_table_prefix=prefix,
                             **{"outputs": FOLDERS, **settings})  # fmt: skip
        dedup_run.run(spark, config)
        report: dict[str, Any] = json.loads((out / "report.json").read_text())
        return report

    report = job()
    expected = api_results[report["engine"]["engine"]]
    assert report["tables"] == {name: prefix + name for name in FOLDERS}
    assert sorted_rows(spark.table("nd_clusters")) == expected["clusters"]
    assert sorted_rows(spark.table("nd_pairs")) == expected["pairs"]
    assert sorted_rows(spark.table("nd_docs").select("id")) == expected["kept"]
    assert not (tmp_path / "out" / "clusters").exists()  # tables instead of folders
    props = {r[0]: r[1] for r in spark.sql("SHOW TBLPROPERTIES nd_clusters").collect()}
    assert props[WRITTEN_BY] == "dedup"
    # a rerun replaces its own tables and drops the ones it no longer writes
    report = job(outputs=("docs", "clusters"))
    assert not spark.catalog.tableExists("nd_pairs")
    assert sorted_rows(spark.table("nd_clusters")) == expected["clusters"]
    # a table neardup did not write is never replaced
    spark.createDataFrame([("keep me",)], "x string").write.saveAsTable("nd_rejects")
    with pytest.raises(InputError, match=re.escape("table 'nd_rejects' exists and was not")):
        job()
    assert sorted_rows(spark.table("nd_rejects")) == [["keep me"]]
    with pytest.raises(InputError, match="input_table 'nope' does not exist"):
        dedup_run.run(spark, load_config(output=str(tmp_path / "o2"), id_col="id",
                                         input_table="nope"))  # fmt: skip
    for table in ("copyrights", "nd_docs", "nd_clusters", "nd_rejects"):
        spark.sql(f"DROP TABLE IF EXISTS {table}")


def test_renamed_keys_stay_aliases_with_a_warning() -> None:
    """The settings' public names are an API: an old name still works, with a warning."""
    with pytest.warns(DeprecatedKey, match="config key 'k' .* is deprecated: use 'max_distance'"):
        config = frame_config({"method": "simhash", "k": 5})
    assert config.max_distance == 5


def test_column_functions_equal_the_fingerprint_job(spark, real, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The fingerprint job and ``functions.simhash`` give every real text the same value,
    for ditto/2 with options and for fingerprint's preset."""
    for preset, options in (("ditto/2", {"char": 3, "word": 1}), ("fingerprint", {})):
        out = tmp_path / preset.replace("/", "-")
        config = load_fingerprint_config(input=str(REAL), output=str(out), input_format="jsonl",
                                         id_col="id", preset=preset, **options)  # fmt: skip
        fingerprint_run.run(spark, config)
        job = dict(_parquet_rows(out / "fingerprints", ["doc_id", "fingerprint"]))
        columns = real.select("id", nf.simhash("text", preset, **options)).collect()
        assert len(job) == len(columns) == 416
        assert {r[0]: r[1] for r in columns} == job, preset


@pytest.mark.parametrize("name", [n for n in RESERVED if n not in ("doc_id", "text")])
def test_every_reserved_column_is_refused(spark, name: str) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([], f"id string, body string, {name} string")
    with pytest.raises(InputError, match=f"column '{name}' is reserved by neardup"):
        check_columns(df, "id", "body")
    check_columns(df.drop(name), "id", "body")  # the same frame without it passes


def test_a_streaming_dataframe_is_refused_up_front(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 50: a streaming DataFrame ended in Spark's AnalysisException; every entry point
    that takes a DataFrame refuses it by name, pointing at foreachBatch, before any query
    starts."""
    from pyspark.sql import functions as F

    rate = spark.readStream.format("rate").load()
    texts = rate.select(F.col("value").cast("string").alias("id"), F.lit("a b c").alias("text"))
    images = rate.select(F.col("value").cast("string").alias("path"),
                         F.lit(b"\x89PNG").alias("content"))  # fmt: skip
    calls = {
        "dedup": lambda: neardup_udfs.dedup(texts),
        "dedup_images": lambda: neardup_udfs.dedup_images(images),
        "query_index": lambda: neardup_udfs.query_index(texts, str(tmp_path / "idx")),
    }
    for name, call in calls.items():
        with pytest.raises(InputError) as e:
            call()
        message = str(e.value)
        assert "\n" not in message and "streaming DataFrame" in message, name
        assert "foreachBatch" in message and name in message, name
    assert not spark.streams.active


def _connect_run(src: Path, out: Path, index: Path) -> Path:
    """``out``, written by tests/connect_dedup.py in a process of its own; the test fails
    with the process's last words when its server is not up within
    :data:`CONNECT_START_SECONDS` or its runs take longer than :data:`CONNECT_RUN_SECONDS`."""
    script = str(ROOT / "tests" / "connect_dedup.py")
    log = out.with_suffix(".log")
    with open(log, "w+", encoding="utf-8") as err:
        proc = subprocess.Popen([sys.executable, script, str(src), str(out), str(index)],
                                stdout=subprocess.PIPE, stderr=err, text=True)  # fmt: skip
        try:
            assert proc.stdout is not None
            ready = _line_within(proc, CONNECT_START_SECONDS)
            assert ready.startswith("connect server ready"), (
                f"the Connect server did not start in {CONNECT_START_SECONDS} s: "
                f"{log.read_text()[-3000:]}"
            )
            try:
                code = proc.wait(timeout=CONNECT_RUN_SECONDS)
            except subprocess.TimeoutExpired:
                code = None
            assert code == 0, f"Connect runs ended with {code}: {log.read_text()[-3000:]}"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return out


def _line_within(proc: subprocess.Popen[str], seconds: float) -> str:
    """The first line ``proc`` prints, or "" when it prints none within ``seconds``."""
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=seconds):
            return ""
    return proc.stdout.readline()
