"""The boilerplate job end to end (regions equal Index.cover, cleaned texts, the top
passages, rejects, report) and the same result whatever the partitioning."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from job_runs import URL_BODY
from pyspark.sql import functions as F
from winnow_corpus import KGRAM_BYTES, WINDOW, jsonl_rows, read_table, winnow_docs, write_jsonl

from neardup_udfs.config import load_boilerplate_config
from neardup_udfs.kernels import winnow
from neardup_udfs.runs import boilerplate as boilerplate_job
from neardup_udfs.runs.boilerplate import top_passages
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str]]:
    return winnow_docs()


@pytest.fixture(scope="module")
def boilerplate_run(spark, docs, tmp_path_factory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("boilerplate")
    src = write_jsonl(tmp / "in", jsonl_rows(docs))
    cfg = load_boilerplate_config(
        str(ROOT / "conf/boilerplate.toml"),
        input=str(src),
        output=str(tmp / "out"),
        **URL_BODY,
        max_text_bytes=4000,
        kgram_bytes=KGRAM_BYTES,
        window=WINDOW,
    )
    return cfg, boilerplate_job.run(spark, cfg)


def test_boilerplate_job_end_to_end(spark, docs, boilerplate_run) -> None:  # type: ignore[no-untyped-def]
    cfg, s = boilerplate_run
    out = Path(cfg.output)
    assert (s.input, s.rejected) == (len(docs) + 2, 2)
    reasons = sorted(r.reason for r in spark.read.parquet(str(out / "rejects")).collect())
    assert reasons == ["null text", "text larger than 4000 bytes"]
    index = winnow.Index(KGRAM_BYTES, WINDOW)
    for doc_id, text in docs:
        index.add(doc_id, text)
    want = sorted((d, r.pos, r.length) for d, t in docs for r in index.cover(t, 3, 5))
    assert read_table(spark, out / "regions") == sorted((d, n, p) for d, p, n in want)
    cleaned = {r.url: r for r in spark.read.parquet(str(out / "cleaned")).collect()}
    assert len(cleaned) == len(docs) and set(cleaned["d9"].asDict()) >= {"host", "removed_fraction"}
    assert "rec.boats.paddle" not in cleaned["d9"].body and "rec.boats" in dict(docs)["d9"]
    assert cleaned["d0"].body == dict(docs)["d0"] and cleaned["d0"].removed_fraction == 0.0
    top = spark.read.parquet(str(out / "boilerplate_top")).orderBy(F.col("docs").desc()).first()
    assert top is not None and "rec.boats.paddle" in top.passage and top.docs == 4
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["regions"] == len(want) == s.regions
    assert report["pipeline"]["id"] == "semblance-winnow/1;k=8,w=6"
    assert report["spark"]["lineage_cuts"] == "local" and report["spark"]["jobs"] > 0
    assert report["spark"]["shuffle_partitions"] >= 1  # fitted to the input, as dedup's
    assert report["counts"]["bytes_removed"] == sum(
        len(dict(docs)[u].encode()) - len(r.body.encode()) for u, r in cleaned.items()
    )
    assert (out / "_MANIFEST.json").exists()


def test_boilerplate_same_result_whatever_the_partitioning(
    spark, boilerplate_run, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """The module's run (2 shuffle partitions, adaptive execution and broadcasts off)
    against one with 7 partitions, adaptive execution and broadcast joins on."""
    cfg, _ = boilerplate_run
    other = replace(cfg, output=str(tmp_path / "other"))
    with spark_conf(spark, **{"spark.sql.shuffle.partitions": "7",
                              "spark.sql.adaptive.enabled": "true",
                              "spark.sql.autoBroadcastJoinThreshold": "10485760"}):  # fmt: skip
        boilerplate_job.run(spark, other)
    for name in ("regions", "cleaned", "boilerplate_top", "rejects"):
        got = read_table(spark, tmp_path / "other" / name)
        assert got == read_table(spark, Path(cfg.output) / name), name


def test_top_passages_survive_cuts_inside_characters(spark) -> None:  # type: ignore[no-untyped-def]
    text = "ab é footer shared by all é end"
    docs = spark.createDataFrame([(f"d{i}", text) for i in range(3)], "doc_id string, text string")
    start = text.encode().index(b"\xa9")  # the second byte of the first é
    regions = spark.createDataFrame(
        [(f"d{i}", start, 20) for i in range(3)], "doc_id string, start bigint, length bigint"
    )
    rows = top_passages(docs, regions, 5).collect()
    cut = text.encode()[start : start + 20]
    assert cut.decode("utf-8", "replace").startswith("\ufffd")  # the region's own bytes
    want = text.encode()[start - 1 : start + 20].decode("utf-8")  # widened to the whole é
    assert [(r.passage, r.length, r.docs) for r in rows] == [(want, 20, 3)]
    assert want.startswith("é") and "\ufffd" not in want


def test_top_passages_show_japanese_regions_as_whole_characters(spark) -> None:  # type: ignore[no-untyped-def]
    """Regions cut anywhere in 3-byte characters (as winnowing cuts EUC-JP shop pages once
    decoded): every passage shown is whole characters of the page, never U+FFFD."""
    text = "送料無料のお知らせ。当店の商品は全国一律送料無料でお届けします。"
    data = text.encode()
    docs = spark.createDataFrame([(f"d{i}", text) for i in range(4)], "doc_id string, text string")
    cuts = [(1, 20), (2, 31), (4, 44), (10, 50)]  # starts and ends inside characters
    regions = spark.createDataFrame(
        [(f"d{i}", start, length) for i in range(4) for start, length in cuts],
        "doc_id string, start bigint, length bigint",
    )
    rows = top_passages(docs, regions, 10).collect()
    assert sorted((r.length, r.docs) for r in rows) == sorted((n, 4) for _, n in cuts)
    for r in rows:
        assert "\ufffd" not in r.passage and r.passage in text, r.passage
        start = next(s for s, n in cuts if n == r.length)
        assert data[start : start + r.length] in r.passage.encode()  # it holds the region
