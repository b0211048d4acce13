"""The local engine (config key ``engine``: ``local``; ``runs.local``, ``driver.read``,
``driver.outputs``): a dedup run with no Spark session writes the same rows, columns and
report counts as the Spark stages, reads JSON lines as Spark's reader does or declines
before it writes anything, and is tried only where a local-mode job can take it."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from test_driver_near import REPORTED, TABLES, _corpus

from neardup_udfs.config import ConfigError, load_config
from neardup_udfs.driver import blocks
from neardup_udfs.driver import near as driver_near
from neardup_udfs.driver import outputs as local_outputs
from neardup_udfs.driver.read import Declined, read_jsonl
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import LocalStorage
from neardup_udfs.runs import dedup as dedup_run
from neardup_udfs.runs import local as local_run

ROOT = Path(__file__).resolve().parent.parent


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _config(src: Path | str, out: Path | str, **settings: Any) -> Any:
    base = {"outputs": TABLES, "input_format": "jsonl", "id_col": "url", "text_col": "body"}
    return load_config(
        str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **{**base, **settings}
    )


def _written(out: Path, tables: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    report = json.loads((out / "report.json").read_text())
    got = {}
    for name in tables:
        table = pq.read_table(out / name)
        rows = sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))
        # names and types in order; not nullability, which Spark's own plans set differently
        # for one table under different settings (pairs/ under exact and hybrid verification)
        got[name] = ([(f.name, str(f.type)) for f in table.schema], rows)
    parts = {k: report[k] for k in REPORTED if k != "scores"}
    scores = dict(report["scores"])
    total = scores.pop("total")  # a float sum: its last bits follow the summation order
    return got, {**parts, "scores": scores, "total": round(total, 9), "input": report["input"]}


def _same_as_spark(spark, src: Path, out: Path, **settings: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Runs ``src`` on the local engine, held and streamed (blocks of a few records, on two
    processes; candidate groups a few rows at a time), and on Spark stages; asserts equal
    outputs."""
    results = {}
    for engine in ("local", "streamed", "spark"):
        where = out / engine
        with pytest.MonkeyPatch.context() as mp:
            if engine == "streamed":
                mp.setattr(local_run, "DRIVER_TEXT_COPIES", 10**12)  # never held whole
                mp.setattr(blocks, "BLOCK_BYTES", 600)
                mp.setattr(driver_near, "GROUP_ROWS", 5)  # many kernel calls a band
            config = _config(src, where, engine="spark" if engine == "spark" else "local",
                             **settings)  # fmt: skip
            dedup_run.run(spark, config)
        report = json.loads((where / "report.json").read_text())
        assert report["engine"]["engine"] == ("spark" if engine == "spark" else "local")
        if engine != "spark":
            assert report["engine"]["input"] == ("held" if engine == "local" else "streamed")
        results[engine] = _written(where, TABLES)
    assert json.loads((out / "streamed" / "report.json").read_text())["engine"]["blocks"] > 2
    spark_tables, spark_report = results["spark"]
    for engine in ("local", "streamed"):
        local_tables, local_report = results[engine]
        for name in TABLES:
            assert local_tables[name][0] == spark_tables[name][0], (engine, name)  # columns
            assert local_tables[name][1] == spark_tables[name][1], (engine, name)
        assert local_report == spark_report, engine
    return json.loads((out / "local" / "report.json").read_text())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """test_driver_near's corpus, plus what a real export holds: typed side columns (a date
    string, a flag, a column null on every line), repeated ids, a null id, an oversized text."""
    path = _corpus(tmp_path_factory.mktemp("local") / "corpus.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for i, r in enumerate(rows):
        r.update(fetched=f"2024-01-{i % 28 + 1:02d}", ok=i % 2 == 0, note=None)
    rows += [
        {**rows[0], "body": rows[0]["body"] + " again"},  # the same id, a longer text
        {**rows[1], "body": "a"},  # the same id, a shorter text: it wins
        {"url": None, "body": "no id here at all"},
        {"url": "huge", "body": "word " * 3000},
    ]
    return _write(path, rows)


@pytest.mark.spark
def test_local_equals_spark_on_a_real_export(spark, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every output table (columns, types, order, rows) and the report's counts, bands, hot
    buckets, histogram, scores and input rejects; report.json says no Spark job ran."""
    report = _same_as_spark(spark, corpus, tmp_path, max_text_bytes=10_000, hot_bucket_size=3)
    assert report["spark"]["jobs"] == 0
    rejects = report["input"]["rejects_by_reason"]
    assert rejects == {
        "duplicate doc_id": 2,
        "null doc_id": 1,
        "null text": 1,
        "text larger than 10000 bytes": 1,
    }
    assert report["counts"]["removed"] > 0 and report["counts"]["hot_buckets"] > 0


@pytest.mark.spark
@pytest.mark.parametrize(
    "settings",
    [
        {"representative": "earliest", "order_col": "crawl", "verification": "exact"},
        {"method": "simhash", "normalize": "none", "representative": "longest"},
    ],
    ids=["earliest-exact", "simhash"],
)
def test_local_equals_spark_for_rules_and_methods(  # type: ignore[no-untyped-def]
    spark, corpus: Path, tmp_path: Path, settings: dict[str, Any]
) -> None:
    _same_as_spark(spark, corpus, tmp_path, **settings)


@pytest.mark.spark
def test_local_equals_spark_without_an_id_column_over_a_folder(  # type: ignore[no-untyped-def]
    spark, corpus: Path, tmp_path: Path
) -> None:
    """Ids ``<file URI>:<record index>`` over a folder of two files, an empty file and
    blank lines among the records, in a folder whose name needs escaping in a URI."""
    lines = corpus.read_text().splitlines()
    folder = tmp_path / "in put é%"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(lines[:30]) + "\n\n   \n")
    (folder / "b.jsonl").write_text("\n".join(lines[30:]) + "\n")
    (folder / "empty.jsonl").write_text("")
    _same_as_spark(spark, folder, tmp_path / "out", id_col=None)


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


# --- the reader: what it takes and what it declines (no Spark) ---------------------------


def test_reader_gives_sparks_columns_ids_and_rejects(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "a.jsonl",
        [
            {"z": 1, "text": "hello world", "day": "2020-01-01", "flag": True},
            "",
            {"text": "second", "z": 2, "gone": None},
            {"text": None},
        ],
    )
    got = read_jsonl(str(src), None, "text", 1000)
    assert got.good.column_names == ["day", "flag", "gone", "text", "z", "doc_id"]
    assert [str(f.type) for f in got.good.schema] == ["string", "bool", "string", "string",
                                                      "int64", "string"]  # fmt: skip
    uri = f"file:{src}"
    assert got.good.column("doc_id").to_pylist() == [f"{uri}:0", f"{uri}:1"]
    assert got.good.column("day").to_pylist() == ["2020-01-01", None]  # never a timestamp
    assert got.rejects.to_pylist() == [{"doc_id": f"{uri}:2", "reason": "null text"}]
    assert got.rows == 3 and got.text_bytes == len("hello world") + len("second")


def test_reader_keeps_the_smallest_text_of_a_repeated_id(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "a.jsonl",
        [{"id": 5, "t": "bbb"}, {"id": 5, "t": "aaa"}, {"id": 6, "t": "x" * 50}, {"t": "y"}],
    )
    got = read_jsonl(str(src), "id", "t", 40)
    assert got.good.select(["doc_id", "t"]).to_pylist() == [{"doc_id": "5", "t": "aaa"}]
    assert sorted(got.rejects.to_pylist(), key=str) == sorted(
        [
            {"doc_id": "5", "reason": "duplicate doc_id"},
            {"doc_id": "6", "reason": "text larger than 40 bytes"},
            {"doc_id": None, "reason": "null doc_id"},
        ],
        key=str,
    )
    assert got.counts == {"duplicate doc_id": 1, "text larger than 40 bytes": 1, "null doc_id": 1}


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (['{"text": "a"}', "{not json"], "a.jsonl"),
        (['{"text": "a", "score": 0.5}'], "'score' is double"),
        (['{"text": "a", "meta": {"k": 1}}'], "'meta' is struct"),
        (['{"text": "a", "tags": ["x"]}'], "'tags' is list"),
        (['{"text": "a", "n": 1}', '{"text": "b", "n": "one"}'], "a.jsonl"),
        (['{"text": "a", "Text2": "b", "text2": "c"}'], "differ only in case"),
        (['{"text": 5}'], "'text' is not a string"),
        (['{"body": "a"}'], "no column 'text'"),
        (['{"text": "a", "doc_id": "x"}'], "reserved column"),
        (['["text", "a"]'], "a.jsonl"),
    ],
)
def test_reader_declines_what_only_spark_reads_as_promised(
    tmp_path: Path, lines: list[str], said: str
) -> None:
    src = _write(tmp_path / "a.jsonl", lines)
    with pytest.raises(Declined, match=said):
        read_jsonl(str(src), None, "text", 1000)


def test_reader_declines_unusual_files(tmp_path: Path) -> None:
    """Compressed, wide or BOM-marked text, invalid UTF-8, hidden files, sub-folders, a
    glob, an input of no records, and input over the byte limit."""
    line = b'{"text": "caf\xc3\xa9 au lait"}\n'
    cases = {
        "gz": ("a.jsonl.gz", gzip.compress(line), "compressed"),
        "utf16": ("a.jsonl", line.decode().encode("utf-16"), "not plain UTF-8"),
        "bom": ("a.jsonl", b"\xef\xbb\xbf" + line, "not plain UTF-8"),
        "invalid": ("a.jsonl", b'{"text": "caf\xe9"}\n', "UTF-8"),
        "hidden": (".a.jsonl", line, "hidden"),
        "nested": ("sub/a.jsonl", line, "sub-folders"),
        "empty": ("a.jsonl", b"", "no records"),
    }
    for case, (name, data, said) in cases.items():
        folder = tmp_path / case
        (folder / name).parent.mkdir(parents=True)
        (folder / name).write_bytes(data)
        if case == "hidden":
            (folder / "b.jsonl").write_bytes(line)
        with pytest.raises(Declined, match=said):
            read_jsonl(str(folder), None, "text", 1000)
    with pytest.raises(Declined, match="glob"):
        read_jsonl(str(tmp_path / "gz" / "*.gz"), None, "text", 1000)
    (tmp_path / "ok.jsonl").write_bytes(line * 10)
    with pytest.raises(Declined, match="exceed"):
        read_jsonl(str(tmp_path / "ok.jsonl"), None, "text", 1000, max_file_bytes=100)


# --- when the local engine is tried ------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "conf", "said"),
    [
        ({}, {}, None),
        ({}, {"spark.master": "local[2]"}, None),
        ({}, {"spark.master": "yarn"}, "not local"),
        ({}, {"spark.master": "local-cluster[2,1,1024]"}, "not local"),
        ({"engine": "spark"}, {}, "engine = 'spark'"),
        ({"clustering": "connected"}, {}, "connected"),
        ({"against": "idx"}, {}, "index"),
        ({"input_format": "parquet"}, {}, "'parquet'"),
        ({"input": "s3a://bucket/x"}, {}, "not on the local filesystem"),
        ({}, {"spark.hadoop.fs.defaultFS": "hdfs://nn:8020"}, "default filesystem"),
        ({}, {"spark.hadoop.fs.mem.impl": "x"}, "Hadoop filesystem"),
    ],
)
def test_local_is_tried_only_where_it_can_run(
    tmp_path: Path, settings: dict[str, Any], conf: dict[str, str], said: str | None
) -> None:
    settings = {"input": str(tmp_path / "in.jsonl"), **settings}
    cfg = _config(settings.pop("input"), tmp_path / "out", **settings)
    why = local_run.local_refusal(cfg, conf)
    assert (why is None) if said is None else (said in (why or ""))


def test_local_refusal_names_a_hadoop_configuration(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    cfg = _config(tmp_path / "in.jsonl", tmp_path / "out")
    assert "default filesystem" in (local_run.local_refusal(cfg, {}) or "")
    uri = _config(f"file:{tmp_path}/in.jsonl", f"file:{tmp_path}/out")
    assert local_run.local_refusal(uri, {}) is None  # a file: URI is local whatever the default


def test_engine_local_is_checked_with_the_config(tmp_path: Path) -> None:
    for settings, said in (
        ({"clustering": "connected"}, "anchored only"),
        ({"against": "idx"}, "does not match an index"),
        ({"input_format": "parquet"}, "JSON lines only"),
    ):
        with pytest.raises(ConfigError, match=said):
            _config(tmp_path / "in.jsonl", tmp_path / "out", engine="local", **settings)


def test_forced_local_names_why_it_cannot_run(tmp_path: Path) -> None:
    """``engine = "local"`` on an input it declines: an InputError with the reason, and the
    output folder holds nothing but what was there."""
    src = _write(tmp_path / "in.jsonl", ['{"text": "a", "score": 0.5}'])
    out = tmp_path / "out"
    with pytest.raises(InputError, match="'score' is double"):
        local_run.try_local(_config(src, out, engine="local", id_col=None, text_col="text"))
    assert not out.exists() or sorted(os.listdir(out)) == []


def test_local_run_keeps_the_output_rules(tmp_path: Path) -> None:
    """The same claim as a Spark run: an output inside the input is refused before anything
    is written, and a folder of the user's under an output name is never replaced."""
    folder = tmp_path / "in"
    folder.mkdir()
    _write(folder / "a.jsonl", [{"text": "one two three four"}])
    with pytest.raises(InputError, match="lies inside input"):
        local_run.run_local(_config(folder, folder / "out", id_col=None, text_col="text"), {})
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="did not write"):
        local_run.run_local(_config(folder, out, id_col=None, text_col="text"), {})
    assert (out / "docs" / "mine.txt").read_text() == "keep me"


# --- the storage layer without a JVM -----------------------------------------------------


def test_local_storage_drops_stale_checksums_and_creates_exclusively(tmp_path: Path) -> None:
    store = LocalStorage()
    target = tmp_path / "report.json"
    crc = tmp_path / ".report.json.crc"
    target.write_text("old")
    crc.write_bytes(b"stale")
    store.write_bytes(str(target), b"new")
    assert target.read_bytes() == b"new" and not crc.exists()  # Hadoop would reject "new"
    assert store.list(str(tmp_path)) == ["report.json"]
    lock = f"file:{tmp_path}/_LOCK.json"
    assert store.create_new(lock, b"me") and not store.create_new(lock, b"you")
    assert store.read_bytes(lock) == b"me"
    assert store.qualified(str(tmp_path / "x")) == f"file:{tmp_path}/x"
    store.delete(str(tmp_path))
    assert not tmp_path.exists()


def test_the_feature_pass_on_two_processes_equals_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The forked second half gives the rows one process gives, in order; a child that fails
    leaves its half to the parent, with the same rows."""
    import pyarrow as pa

    from neardup_udfs.driver import near
    from neardup_udfs.presets import resolve

    texts = [f"doc {i} " + " ".join(f"w{(i * j) % 97}" for j in range(30)) for i in range(50)]
    table = pa.table({"doc_id": [f"d{i:03d}" for i in range(50)], "text": texts})
    pipeline = resolve("semblance")
    monkeypatch.setattr(near, "BATCH_ROWS", 8)
    one = near._features(table, pipeline, workers=1)
    monkeypatch.setattr(near, "FORK_MIN_ROWS", 0)
    assert near._features(table, pipeline, workers=2).equals(one)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the child cannot write")

    from neardup_udfs.driver import fork

    monkeypatch.setattr(fork.pickle, "dump", broken)  # only the child pickles
    assert near._features(table, pipeline, workers=2).equals(one)


def test_driver_cores_follow_the_master() -> None:
    from neardup_udfs.session import driver_cores

    assert driver_cores({"spark.master": "local"}) == 1
    assert driver_cores({"spark.master": "local[3]"}) == 3
    assert driver_cores({"spark.master": "local[2,4]"}) == 2
    assert driver_cores({"spark.master": "local[*]"}) == (os.cpu_count() or 1)
    assert driver_cores({}) == (os.cpu_count() or 1)  # pyspark's default master: local[*]
    assert driver_cores({"spark.master": "yarn", "spark.driver.cores": "4"}) == 4
    assert driver_cores({"spark.master": "yarn"}) == 1


def test_local_budget_is_the_driver_memory() -> None:
    """No result limit applies: nothing is collected through the JVM."""
    from neardup_udfs.session import local_byte_budget

    assert local_byte_budget({}) == (1 << 30, "spark.driver.memory 1g")
    got = local_byte_budget({"spark.driver.memory": "4g", "spark.driver.maxResultSize": "1m"})
    assert got == (4 << 30, "spark.driver.memory 4g")


@pytest.mark.spark
def test_made_ids_name_the_file_as_spark_does(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``spark_file_uri`` is Spark's ``_metadata.file_path``: a space, ``#``, ``%`` and a
    non-breaking space quoted, other punctuation and non-ASCII letters as they are."""
    from neardup_udfs.driver.read import spark_file_uri

    folder = tmp_path / "x y#z\u00a0w;é,=@+$&'!~*()%"
    folder.mkdir()
    (folder / "f.jsonl").write_text('{"text": "a"}\n')
    got = spark.read.json(str(folder)).select("_metadata.file_path").first()[0]
    assert got == spark_file_uri(f"file:{folder / 'f.jsonl'}")
    assert "%20" in got and "%23" in got and "%C2%A0" in got and "%25" in got and "é" in got


# --- the streamed read ------------------------------------------------------------------------


def test_blocks_cover_each_file_in_whole_lines(tmp_path: Path) -> None:
    lines = [json.dumps({"text": "x" * (i % 7) + str(i)}) for i in range(50)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines))  # no line end after the last record
    files = [f for f in LocalStorage().files(str(src))]
    cut = blocks.plan_blocks(files, 64)
    data = src.read_bytes()
    assert [b.start for b in cut] == [0, *(b.end for b in cut[:-1])]
    assert cut[-1].end == len(data) and len(cut) > 5
    assert all(data[b.end - 1 : b.end] == b"\n" for b in cut[:-1])
    assert sum(b.read().num_rows for b in cut) == 50


def test_a_line_past_any_text_limit_is_declined_before_it_is_read(tmp_path: Path) -> None:
    """A block ends at the first line end after its cut, but never reads a line longer
    than a text the run accepts could make (6 bytes a byte, plus 1 MiB): such an input
    goes to Spark's reader, which rejects the text."""
    src = _write(tmp_path / "in.jsonl", [{"text": "a b c"}, {"text": "x" * (3 << 20)}])
    pipeline = _config(src, tmp_path / "o").pipeline()
    with pytest.raises(Declined, match="a line longer than 1048636 bytes near byte 26"):
        blocks.read_streamed(str(src), None, "text", 10, pipeline, max_rows=10, block_bytes=8)
    got = blocks.read_streamed(str(src), None, "text", 10**6, pipeline, max_rows=10,
                               block_bytes=8)  # fmt: skip
    assert got.n_good == 1 and got.counts == {"text larger than 1000000 bytes": 1}
    got.close()


def _streamed(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(local_run, "DRIVER_TEXT_COPIES", 10**12)  # never held whole
    mp.setattr(blocks, "BLOCK_BYTES", 300)


def test_streamed_scratch_lives_under_spark_local_dir_and_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sketches and sets wait in a folder of the run's own under ``spark.local.dir``,
    removed when the run ends, as when the read fails half way."""
    _streamed(monkeypatch)
    made: list[str] = []
    real = blocks.tempfile.mkdtemp

    def mkdtemp(**kwargs: Any) -> str:
        made.append(real(**kwargs))
        return made[-1]

    monkeypatch.setattr(blocks.tempfile, "mkdtemp", mkdtemp)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    rows = [{"text": f"words of document {i} " * 20} for i in range(40)]
    src = _write(tmp_path / "in.jsonl", rows + rows)
    conf = {"spark.local.dir": f"{scratch},/elsewhere", "spark.driver.memory": "1g"}
    summary = local_run.run_local(
        _config(src, tmp_path / "out", id_col=None, text_col="text"), conf
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["engine"]["input"] == "streamed" and summary.removed >= 40
    assert len(made) == 1 and made[0].startswith(str(scratch)) and os.listdir(scratch) == []
    bad = _write(tmp_path / "bad.jsonl", rows + [{"text": "a float", "score": 0.5}])
    with pytest.raises(Declined, match="'score' is double"):
        blocks.read_streamed(str(bad), None, "text", 1000, _config(bad, tmp_path / "o").pipeline(),
                             max_rows=10**6, scratch_dir=str(scratch), workers=2)  # fmt: skip
    assert len(made) == 2 and os.listdir(scratch) == []


def test_streamed_run_declines_what_its_budget_cannot_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``spark.driver.memory``'s documents the streamed read stops before it writes
    anything; within it, an input without a single duplicate runs (no cluster to sample)."""
    _streamed(monkeypatch)
    monkeypatch.setattr(local_run, "STREAM_BYTES_PER_DOC", 1 << 20)  # 1 MiB a document
    src = _write(tmp_path / "in.jsonl", [{"text": f"doc {i} " * 30} for i in range(1200)])
    out = tmp_path / "out"
    config = _config(src, out, engine="local", id_col=None, text_col="text")
    with pytest.raises(Declined, match="more than .* documents for the budget"):
        local_run.run_local(config, {"spark.driver.memory": "1g"})
    assert not (out / "report.json").exists() and not (out / "docs").exists()
    summary = local_run.run_local(config, {"spark.driver.memory": "2g"})
    assert summary.removed == 0 and pq.read_table(out / "docs").num_rows == 1200
    assert pq.read_table(out / "samples").num_rows == 0
