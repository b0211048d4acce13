"""The local engine (config key ``engine``: ``local``; ``runs.local``): a dedup run with no
Spark session writes the same rows, columns and report counts as the Spark stages, is tried
only where a local-mode job can take it, and declines before it writes anything what it
cannot take (its reader: tests/driver/test_read.py; its streamed read: test_blocks.py)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from engine_corpus import REPORTED, TABLES, engine_corpus, with_excerpts
from local_runs import engine_config, streamed, write_lines

from neardup_udfs import engine as engine_rules
from neardup_udfs.config import ConfigError
from neardup_udfs.driver import blocks
from neardup_udfs.driver import near as driver_near
from neardup_udfs.driver.read import Declined
from neardup_udfs.io.readers import NOT_UNICODE, InputError
from neardup_udfs.runs import dedup as dedup_run
from neardup_udfs.runs import local as local_run


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
                mp.setattr(engine_rules, "DRIVER_TEXT_COPIES", 10**12)  # never held whole
                mp.setattr(blocks, "BLOCK_BYTES", 600)
                mp.setattr(driver_near, "GROUP_ROWS", 5)  # many kernel calls a band
            config = engine_config(src, where, engine="spark" if engine == "spark" else "local",
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
    """engine_corpus's corpus, plus what a real export holds: typed side columns (a date
    string, a flag, a column null on every line), repeated ids, a null id, an oversized text."""
    path = engine_corpus(tmp_path_factory.mktemp("local") / "corpus.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for i, r in enumerate(rows):
        r.update(fetched=f"2024-01-{i % 28 + 1:02d}", ok=i % 2 == 0, note=None)
    rows += [
        {**rows[0], "body": rows[0]["body"] + " again"},  # the same id, a longer text
        {**rows[1], "body": "a"},  # the same id, a shorter text: it wins
        {"url": None, "body": "no id here at all"},
        {"url": "huge", "body": "word " * 3000},
    ]
    return write_lines(path, rows)


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
def test_lone_surrogates_are_the_same_rejects_on_every_engine(  # type: ignore[no-untyped-def]
    spark, corpus: Path, tmp_path: Path
) -> None:
    """Issue 50: a text with a lone surrogate escape was "null text" on Spark and declined
    by the local engine; now one reason (readers.NOT_UNICODE) held, streamed, on the driver
    engine and on Spark stages, and the same '?' for one in the id or another field."""
    src = tmp_path / "corpus.jsonl"
    lines = corpus.read_text().splitlines() + [
        r'{"url": "lone-high", "body": "harbour ferries x\ud800y", "crawl": 1}',
        r'{"body": "a lone low \uDC00 before the id", "url": "lone-low", "crawl": 2}',
        r'{"url": "pair", "body": "a pair \ud83d\ude00 is one character", "crawl": 3}',
        r'{"url": "escaped", "body": "an escaped backslash \\ud800", "crawl": 1}',
        r'{"url": "id-\ud800", "body": "the id holds a lone surrogate", "note": "n\udfff"}',
    ]
    src.write_text("\n".join(lines) + "\n")
    report = _same_as_spark(spark, src, tmp_path / "out", max_text_bytes=10_000)
    assert report["input"]["rejects_by_reason"][NOT_UNICODE] == 2
    driver = tmp_path / "out" / "driver"
    dedup_run.run(spark, engine_config(src, driver, engine="driver", max_text_bytes=10_000))
    on_spark = _written(tmp_path / "out" / "spark", ("rejects", "docs"))[0]
    assert _written(driver, ("rejects", "docs"))[0] == on_spark
    docs = {r["url"]: r for r in pq.read_table(driver / "docs").to_pylist()}
    assert docs["id-?"]["note"] == "n?" and "pair" in docs and "escaped" in docs


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
    cfg = engine_config(settings.pop("input"), tmp_path / "out", **settings)
    why = engine_rules.local_refusal(cfg, conf)
    assert (why is None) if said is None else (said in (why or ""))


def test_local_refusal_names_a_hadoop_configuration(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    cfg = engine_config(tmp_path / "in.jsonl", tmp_path / "out")
    assert "default filesystem" in (engine_rules.local_refusal(cfg, {}) or "")
    uri = engine_config(f"file:{tmp_path}/in.jsonl", f"file:{tmp_path}/out")
    assert engine_rules.local_refusal(uri, {}) is None  # a file: URI is local whatever the default


def test_engine_local_is_checked_with_the_config(tmp_path: Path) -> None:
    for settings, said in (
        ({"clustering": "connected"}, "anchored only"),
        ({"against": "idx"}, "does not match an index"),
        ({"input_format": "parquet"}, "JSON lines only"),
    ):
        with pytest.raises(ConfigError, match=said):
            engine_config(tmp_path / "in.jsonl", tmp_path / "out", engine="local", **settings)


def test_forced_local_names_why_it_cannot_run(tmp_path: Path) -> None:
    """``engine = "local"`` on an input it declines: an InputError with the reason, and the
    output folder holds nothing but what was there."""
    src = write_lines(tmp_path / "in.jsonl", ['{"text": "a", "score": 0.5}'])
    out = tmp_path / "out"
    with pytest.raises(InputError, match="'score' is double"):
        local_run.try_local(engine_config(src, out, engine="local", id_col=None, text_col="text"))
    assert not out.exists() or sorted(os.listdir(out)) == []


def test_local_run_keeps_the_output_rules(tmp_path: Path) -> None:
    """The same claim as a Spark run: an output inside the input is refused before anything
    is written, and a folder of the user's under an output name is never replaced."""
    folder = tmp_path / "in"
    folder.mkdir()
    write_lines(folder / "a.jsonl", [{"text": "one two three four"}])
    with pytest.raises(InputError, match="lies inside input"):
        local_run.run_local(engine_config(folder, folder / "out", id_col=None, text_col="text"), {})
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "mine.txt").write_text("keep me")
    with pytest.raises(InputError, match="did not write"):
        local_run.run_local(engine_config(folder, out, id_col=None, text_col="text"), {})
    assert (out / "docs" / "mine.txt").read_text() == "keep me"


# --- the streamed read ------------------------------------------------------------------------


def test_streamed_run_declines_what_its_budget_cannot_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``spark.driver.memory``'s documents the streamed read stops before it writes
    anything; within it, an input without a single duplicate runs (no cluster to sample)."""
    streamed(monkeypatch)
    monkeypatch.setattr(engine_rules, "STREAM_BYTES_PER_DOC", 1 << 20)  # 1 MiB a document
    src = write_lines(tmp_path / "in.jsonl", [{"text": f"doc {i} " * 30} for i in range(1200)])
    out = tmp_path / "out"
    config = engine_config(src, out, engine="local", id_col=None, text_col="text")
    with pytest.raises(Declined, match="more than .* documents for the budget"):
        local_run.run_local(config, {"spark.driver.memory": "1g"})
    assert not (out / "report.json").exists() and not (out / "docs").exists()
    summary = local_run.run_local(config, {"spark.driver.memory": "2g"})
    assert summary.removed == 0 and pq.read_table(out / "docs").num_rows == 1200
    assert pq.read_table(out / "samples").num_rows == 0


@pytest.fixture(scope="module")
def excerpts(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_excerpts(corpus, tmp_path_factory.mktemp("excerpts") / "corpus.jsonl")


@pytest.mark.spark
def test_containment_is_the_same_held_streamed_and_on_the_driver_engine(  # type: ignore[no-untyped-def]
    spark, excerpts: Path, tmp_path: Path
) -> None:
    """A containment run writes the same rows on the local engine (held and streamed) and
    the driver engine; each document removed as contained is verified inside the document
    kept in its place, and report.json carries the containment part of the pipeline id."""
    results = {}
    for engine in ("local", "streamed", "driver"):
        where = tmp_path / engine
        with pytest.MonkeyPatch.context() as mp:
            if engine == "streamed":
                streamed(mp)
            config = engine_config(excerpts, where, engine="local" if engine != "driver" else
                                   "driver", containment=0.8, max_text_bytes=10_000)  # fmt: skip
            dedup_run.run(spark, config)
        results[engine] = _written(where, TABLES)
    for engine in ("streamed", "driver"):
        assert results[engine] == results["local"], engine
    tables, report = results["local"]
    clusters = tables["clusters"][1]
    assert ("relation", "string") in tables["clusters"][0]
    by_id = {r["doc_id"]: r for r in clusters}
    contained = [r for r in clusters if r["relation"] == "containment"]
    assert {r["doc_id"] for r in contained} >= {f"excerpt-{i}" for i in range(8)} | {"excerpt-copy"}
    assert by_id["teaser"]["relation"] is None  # fewer than 20 shingles: no part
    # 90 % of a page, its near-duplicate: the page is kept in its place whatever the rule
    assert by_id["a-most"]["relation"] == "containment"
    sets = _shingle_sets(excerpts)
    for r in contained:
        kept = by_id[r["cluster_id"]]
        if r["doc_id"] not in sets or kept["doc_id"] not in sets:
            continue  # an id the input repeats: which text was accepted is another test's
        assert kept["is_representative"]
        inside = len(sets[r["doc_id"]] & sets[kept["doc_id"]]) / len(sets[r["doc_id"]])
        assert inside >= 0.8 and r["similarity"] == pytest.approx(inside)
    pairs = tables["pairs"][1]
    assert {p["relation"] for p in pairs} == {"jaccard", "containment"}
    written = json.loads((tmp_path / "local" / "report.json").read_text())
    assert written["pipeline"]["id"].endswith(";containment=0.8,min_shingles=20")
    counts = written["counts"]
    assert counts["contained"] == len(contained) and counts["containment_pairs"] >= 8
    assert counts["kept"] + counts["removed"] + counts["rejected"] == counts["input"]
    page = (tmp_path / "local" / "report.html").read_text()
    assert f'id="count-contained" class="num" data-value="{len(contained)}"' in page


def _shingle_sets(path: Path) -> dict[str, set[int]]:
    """Each accepted document's word-shingle set, as conf/dedup.toml's pipeline makes it."""
    from neardup_udfs.kernels.words_jit import shingle_sets_batch

    rows = [json.loads(line) for line in path.read_text().splitlines()]
    seen = Counter(r["url"] for r in rows)
    rows = [r for r in rows if seen[r["url"]] == 1 and r["body"] and len(r["body"]) <= 10_000]
    pipeline = engine_config(path, "unused").pipeline()
    hashes, offsets = shingle_sets_batch(pipeline.normalize_batch([r["body"] for r in rows]),
                                         pipeline.param("w"))  # fmt: skip
    return {r["url"]: set(hashes[offsets[i] : offsets[i + 1]].tolist()) for i, r in enumerate(rows)}
