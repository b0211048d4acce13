"""The boilerplate job end to end (regions equal Index.cover, cleaned texts, the top
passages, rejects, report) and the same result whatever the partitioning; with keep one,
the stages.passages decisions in regions/, cleaned/ and report.json."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from job_runs import URL_BODY
from pyspark.sql import functions as F
from winnow_corpus import KGRAM_BYTES, WINDOW, jsonl_rows, read_table, winnow_docs, write_jsonl

from neardup_udfs.config import load_boilerplate_config
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels import winnow
from neardup_udfs.runs import boilerplate as boilerplate_job
from neardup_udfs.runs.boilerplate import pipeline_id, top_passages
from neardup_udfs.settings import ConfigError
from neardup_udfs.stages.passages import (
    keep_counts,
    keep_one,
    region_signatures,
    representative_keys,
)
from neardup_udfs.stages.winnowing import doc_freq, fingerprints
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
    # keep none (the default): every copy goes, regions/ has its three columns
    assert cfg.keep == "none" and report["keep"] == {"mode": "none"}
    assert sorted(spark.read.parquet(str(out / "regions")).columns) == ["doc_id", "length", "start"]
    assert "keep" not in report["counts"] and "keep" not in report["seconds"]


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
        [(f"d{i}", start, 20, [7]) for i in range(3)],
        "doc_id string, start bigint, length bigint, signature array<bigint>",
    )
    rows = top_passages(docs, regions, 5, 3).collect()
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
    regions = spark.createDataFrame(  # one signature per cut, none inside another
        [(f"d{i}", start, length, [start]) for i in range(4) for start, length in cuts],
        "doc_id string, start bigint, length bigint, signature array<bigint>",
    )
    rows = top_passages(docs, regions, 10, 4).collect()
    assert sorted((r.length, r.docs) for r in rows) == sorted((n, 4) for _, n in cuts)
    for r in rows:
        assert "\ufffd" not in r.passage and r.passage in text, r.passage
        start = next(s for s, n in cuts if n == r.length)
        assert data[start : start + r.length] in r.passage.encode()  # it holds the region


LEE = ROOT / "tests" / "data" / "text" / "lee_news_12.txt"


def test_top_passages_count_the_documents_holding_them(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 50: boilerplate_top counted the documents whose region had exactly the same
    bytes, so the copies of one passage that winnowing cut differently at the edges were
    counted apart (on a real crawl at min_docs 3, 60 of 100 passages showed docs 1). Five
    real news articles each quote a sixth between two articles of their own: every
    passage shown is held by min_docs documents or more, and its docs are the documents
    with a region (the reference's, ``Index.cover``) that holds its bytes."""
    articles = LEE.read_text(encoding="utf-8").splitlines()
    quote = articles[11]
    docs = [(f"d{i}", f"{articles[i]}\n\n{quote}\n\n{articles[i + 5]}") for i in range(5)]
    src = write_jsonl(tmp_path / "in", [{"url": d, "body": t} for d, t in docs])
    cfg = load_boilerplate_config(
        str(ROOT / "conf/boilerplate.toml"),
        input=str(src),
        output=str(tmp_path / "out"),
        **URL_BODY,
        kgram_bytes=KGRAM_BYTES,
        window=WINDOW,
        min_docs=3,
        min_run=5,
    )
    boilerplate_job.run(spark, cfg)
    index = winnow.Index(KGRAM_BYTES, WINDOW)
    for doc_id, text in docs:
        index.add(doc_id, text)
    covered = {
        d: [t.encode()[r.pos : r.pos + r.length] for r in index.cover(t, 3, 5)] for d, t in docs
    }
    # the copies differ at their edges: the documents' regions are not all the same bytes
    assert all(covered.values()) and len({b for c in covered.values() for b in c}) > 1
    top = spark.read.parquet(str(tmp_path / "out" / "boilerplate_top")).collect()
    assert top
    for r in top:
        assert r.passage.isascii() and len(r.passage) == r.length
        held = sum(any(r.passage.encode() in b for b in c) for c in covered.values())
        assert r.docs == held >= cfg.min_docs, (r.docs, held, r.length)


# --- keep one ---

SEEN = {"d1": 7, "d5": 3, "d6": 3, "d10": 1, "d11": 9, "d12": None}  # others: no date


@pytest.fixture(scope="module")
def keep_one_run(spark, docs, boilerplate_run, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The module's run with keep one: earliest by ``seen`` (nulls last), at most 3 holders
    (the footer, in d9-d12, goes everywhere)."""
    base, _ = boilerplate_run
    tmp = tmp_path_factory.mktemp("keep_one")
    rows = [{**r, "seen": SEEN.get(r["url"])} for r in jsonl_rows(docs)]
    src = write_jsonl(tmp / "in", rows)
    cfg = replace(
        base,
        input=str(src),
        output=str(tmp / "out"),
        keep="one",
        representative="earliest",
        order_col="seen",
        max_keep_docs=3,
    )
    return cfg, boilerplate_job.run(spark, cfg)


def stage_decisions(spark, docs, rule: str, max_keep_docs: int | None):  # type: ignore[no-untyped-def]
    """What stages.passages decides on ``docs`` under the run's settings (8, 6, 3, 5)."""
    rows = [(d, t, SEEN.get(d)) for d, t in docs]
    frame = spark.createDataFrame(rows, "doc_id string, text string, seen int")
    fps = fingerprints(frame, KGRAM_BYTES, WINDOW)
    signed = region_signatures(fps, doc_freq(fps), KGRAM_BYTES, 3, 5)
    ranks = representative_keys(frame, rule, "seen")
    return keep_one(signed, ranks, max_keep_docs=max_keep_docs)


def test_boilerplate_keep_one_end_to_end(spark, docs, boilerplate_run, keep_one_run) -> None:  # type: ignore[no-untyped-def]
    cfg, s = keep_one_run
    base, none = boilerplate_run
    out, texts = Path(cfg.output), dict(docs)
    regions = spark.read.parquet(str(out / "regions"))
    assert regions.columns == ["doc_id", "start", "length", "kept_by", "kept", "holders", "maximal"]
    assert [f.dataType.simpleString() for f in regions.schema.fields][3:] == [
        "string",
        "boolean",
        "int",
        "boolean",
    ]
    # the same regions as keep none, each decided as stages.passages decides it
    got = read_table(spark, out / "regions")
    keys = sorted((r.doc_id, r.length, r.start) for r in regions.collect())
    assert keys == read_table(spark, Path(base.output) / "regions") and s.regions == none.regions
    passages = stage_decisions(spark, docs, "earliest", 3)
    assert got == read_table_of(passages.regions)
    decided = {(r.doc_id, r.start): r for r in regions.collect()}
    assert any(r.kept for r in decided.values()) and any(not r.kept for r in decided.values())
    for r in decided.values():
        assert r.kept == (r.maximal and r.kept_by == r.doc_id)
        if r.holders > 3 or not r.maximal:
            assert r.kept_by is None
    # cleaned: each text without the regions that do not survive, nothing else
    cleaned = {r.url: r.body for r in spark.read.parquet(str(out / "cleaned")).collect()}
    assert set(cleaned) == set(texts) and s.input == none.input and s.rejected == none.rejected
    for d, t in texts.items():
        cuts = [(r.start, r.length) for r in decided.values() if r.doc_id == d and not r.kept]
        assert cleaned[d] == winnow.remove_ranges(t.encode(), cuts)[0].decode(), d
    assert all("rec.boats.paddle" not in cleaned[d] for d in ("d9", "d10", "d11", "d12"))
    assert 0 < s.bytes_removed < none.bytes_removed
    # report.json
    report = json.loads((out / "report.json").read_text())
    counts = keep_counts(passages)
    assert report["keep"] == {"mode": "one", "rule": "earliest", "max_keep_docs": 3, **counts}
    assert s.keep == report["keep"] and counts["removed_everywhere"] >= 1
    assert counts["kept_regions"] == sum(r.kept for r in decided.values())
    assert counts["kept_regions"] + counts["removed_regions"] == s.regions == len(decided)
    assert "keep" not in report["counts"] and "keep" in report["seconds"]
    assert (
        report["pipeline"]["id"]
        == ("semblance-winnow/1;k=8,w=6;keep=one,rule=earliest,max_keep_docs=3")
        == s.pipeline
    )
    # boilerplate_top still counts every region, kept or not
    top = Path(base.output) / "boilerplate_top"
    assert read_table(spark, out / "boilerplate_top") == read_table(spark, top)
    assert (out / "_MANIFEST.json").exists()


def read_table_of(df) -> list[tuple]:  # type: ignore[no-untyped-def,type-arg]
    """``df``'s rows as ``read_table`` gives a Parquet table's: columns in name order, sorted."""
    return sorted(tuple(r) for r in df.select(sorted(df.columns)).collect())


def test_keep_one_same_result_whatever_the_partitioning(spark, keep_one_run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg, _ = keep_one_run
    other = replace(cfg, output=str(tmp_path / "other"), representative="longest")
    with spark_conf(spark, **{"spark.sql.shuffle.partitions": "5",
                              "spark.sql.adaptive.enabled": "true",
                              "spark.sql.autoBroadcastJoinThreshold": "10485760"}):  # fmt: skip
        first = boilerplate_job.run(spark, other)
    again = replace(other, output=str(tmp_path / "again"))
    second = boilerplate_job.run(spark, again)
    assert first.keep == second.keep and first.keep["rule"] == "longest"
    for name in ("regions", "cleaned", "boilerplate_top", "rejects"):
        got = read_table(spark, tmp_path / "other" / name)
        assert got == read_table(spark, tmp_path / "again" / name), name


def test_keep_one_pipeline_ids_name_the_rule_and_the_limit() -> None:
    base = {"input": "i", "output": "o"}
    assert pipeline_id(load_boilerplate_config(**base)) == "semblance-winnow/1;k=16,w=16"
    one = load_boilerplate_config(**base, keep="one")
    assert pipeline_id(one) == "semblance-winnow/1;k=16,w=16;keep=one,rule=min_id"
    longest = load_boilerplate_config(**base, keep="one", representative="longest", max_keep_docs=9)
    assert pipeline_id(longest).endswith(";keep=one,rule=longest,max_keep_docs=9")


def test_keep_one_earliest_needs_an_order_column(
    spark, boilerplate_run, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="order_col"):
        load_boilerplate_config(input="i", output="o", keep="one", representative="earliest")
    job = importlib.import_module("boilerplate")
    argv = ["--input", "i", "--output", "o", "--keep", "one", "--representative", "earliest"]
    assert job.main(argv) == 2
    assert "order_col" in capsys.readouterr().err
    # an order column the input does not have: an input error naming the key
    cfg, _ = boilerplate_run
    missing = replace(
        cfg, output=cfg.output + "-missing", keep="one", representative="earliest", order_col="nope"
    )
    with pytest.raises(InputError, match="order_col 'nope'"):
        boilerplate_job.run(spark, missing)
