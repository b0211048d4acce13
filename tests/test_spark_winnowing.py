"""Winnowing on Spark: stages equal the kernels (winnow.text, overlaps, Index.matches/cover);
the spans and boilerplate jobs end to end (rejects, report, determinism)."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from neardup_udfs.config import ConfigError, load_boilerplate_config, load_spans_config
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels import winnow
from neardup_udfs.runs import boilerplate as boilerplate_job
from neardup_udfs.runs import spans as spans_job
from neardup_udfs.runs.boilerplate import top_passages
from neardup_udfs.stages.winnowing import (
    aligned_spans,
    cover_regions,
    covered_bytes,
    doc_freq,
    fingerprints,
    remove_regions,
)
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent

K, W = 8, 6
FOOTER = (
    "\n-- \nPosted to rec.boats.paddle - archived by the list server at example.org; "
    "to leave, mail listserv@example.org\n"
)
HEADER = "Digest ünïcode édition — list header\n"


def _words(rng: random.Random, n: int) -> str:
    return " ".join(f"w{rng.randrange(5000)}" for _ in range(n))


def _corpus(seed: int = 3) -> list[tuple[str, str]]:
    """Documents with shared passages: copied pieces, repeats, a footer and a header."""
    rng = random.Random(seed)
    base = [_words(rng, rng.randint(30, 90)) for _ in range(5)]
    docs = [(f"d{i}", t) for i, t in enumerate(base)]
    docs.append(("d5", base[0][:150] + " inserted ünï " + base[1][40:260] + base[0][:90]))
    docs.append(("d6", base[2] + " " + base[2]))
    docs.append(("d7", "short"))
    docs.append(("d8", ""))
    for i in range(9, 15):
        head = HEADER if i % 2 else ""
        tail = FOOTER if i < 13 else ""
        docs.append((f"d{i}", head + _words(rng, 40) + tail))
    return docs


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str]]:
    return _corpus()


def _frame(spark, docs: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    return spark.createDataFrame(docs, "doc_id string, text string")


# --- stages ---------------------------------------------------------------------------------


def test_fingerprints_equal_the_kernel(spark, docs) -> None:  # type: ignore[no-untyped-def]
    got = fingerprints(_frame(spark, docs), K, W)
    rows = []
    for doc_id, text in docs:
        fp = winnow.text(text, K, W)
        for j, (pos, h) in enumerate(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True)):
            rows.append((doc_id, j, pos, h - (1 << 64) if h >= 1 << 63 else h))
    want = spark.createDataFrame(rows, got.schema)
    assert_df_equality(got, want, ignore_row_order=True)
    assert got.where(F.col("doc_id").isin("d7", "d8")).count() == 0  # too short: no rows


def test_binary_text_fingerprints_by_bytes(spark) -> None:  # type: ignore[no-untyped-def]
    data = b"caf\xc3\xa9 \xff\xfe invalid utf-8 bytes are fingerprinted as they are"
    df = spark.createDataFrame([("b", bytearray(data))], "doc_id string, text binary")
    got = [(r.pos, r.hash & (2**64 - 1)) for r in fingerprints(df, K, W).orderBy("j").collect()]
    fp = winnow.text(data, K, W)
    assert got == list(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True))


def test_aligned_spans_equal_overlaps_per_pair(spark, docs) -> None:  # type: ignore[no-untyped-def]
    texts = dict(docs)
    pairs = [("d0", "d5"), ("d1", "d5"), ("d2", "d6"), ("d6", "d2"), ("d0", "d1"), ("d7", "d0")]
    fps = fingerprints(_frame(spark, docs), K, W)
    wanted = spark.createDataFrame([(b, a) for a, b in pairs], "q_id string, d_id string")
    got = sorted(
        (r.d_id, r.q_id, r.d_start, r.q_start, r.length)
        for r in aligned_spans(fps, fps, K, pairs=wanted).collect()
    )
    want = sorted(
        (a, b, s.pos_a, s.pos_b, s.length)
        for a, b in pairs
        for s in winnow.overlaps(texts[a], texts[b], K, W)
    )
    assert got == want and len(want) > 5


def test_aligned_spans_equal_index_matches(spark, docs) -> None:  # type: ignore[no-untyped-def]
    corpus = docs[:9]
    rng = random.Random(11)
    queries = [
        ("q0", docs[0][1][20:200] + " zz " + docs[3][1][:120]),
        ("q1", docs[6][1] + _words(rng, 10)),
        ("q2", _words(rng, 30)),
    ]
    index = winnow.Index(K, W)
    for doc_id, text in corpus:
        index.add(doc_id, text)
    q = fingerprints(_frame(spark, queries), K, W)
    c = fingerprints(_frame(spark, corpus), K, W)
    got = sorted(
        (r.q_id, r.d_id, r.q_start, r.d_start, r.length) for r in aligned_spans(q, c, K).collect()
    )
    want = sorted(
        (qid, m.id, m.query_pos, m.doc_pos, m.length)
        for qid, text in queries
        for m in index.matches(text)
    )
    assert got == want and len(want) > 5


def test_cover_regions_equal_index_cover(spark, docs) -> None:  # type: ignore[no-untyped-def]
    index = winnow.Index(K, W)
    for doc_id, text in docs:
        index.add(doc_id, text)
    fps = fingerprints(_frame(spark, docs), K, W)
    for min_docs, min_run in ((3, 5), (2, 1), (4, 0)):
        got = sorted(
            tuple(r) for r in cover_regions(fps, doc_freq(fps), K, min_docs, min_run).collect()
        )
        want = sorted(
            (doc_id, r.pos, r.length)
            for doc_id, text in docs
            for r in index.cover(text, min_docs, min_run)
        )
        assert got == want, (min_docs, min_run)
    footer = [r for r in index.cover(dict(docs)["d9"], 3, 5)]
    assert footer and "rec.boats.paddle" in dict(docs)["d9"].encode()[
        footer[-1].pos : footer[-1].pos + footer[-1].length
    ].decode("utf-8", "replace")


def test_cover_within_groups(spark, docs) -> None:  # type: ignore[no-untyped-def]
    groups = {doc_id: ("even" if int(doc_id[1:]) % 2 == 0 else "odd") for doc_id, _ in docs}
    df = spark.createDataFrame(
        [(d, t, groups[d]) for d, t in docs], "doc_id string, text string, host string"
    )
    fps = fingerprints(df, K, W).join(df.select("doc_id", "host"), "doc_id")
    got = sorted(
        tuple(r) for r in cover_regions(fps, doc_freq(fps, "host"), K, 2, 3, "host").collect()
    )
    want = []
    for host in ("even", "odd"):
        index = winnow.Index(K, W)
        members = [(d, t) for d, t in docs if groups[d] == host]
        for d, t in members:
            index.add(d, t)
        want += [(d, r.pos, r.length) for d, t in members for r in index.cover(t, 2, 3)]
    assert got == sorted(want) and want


def test_covered_bytes_counts_overlaps_once(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [("p", 0, 10), ("p", 5, 10), ("p", 30, 5), ("p", 31, 2), ("q", 7, 3)]
    spans = spark.createDataFrame(rows, "pair string, start bigint, length bigint")
    got = {r.pair: r.covered for r in covered_bytes(spans, ["pair"], "start", "length").collect()}
    assert got == {"p": 15 + 5, "q": 3}


def test_remove_regions_keeps_valid_utf8(spark) -> None:  # type: ignore[no-untyped-def]
    text = "keep é BOILER é keep"
    raw = text.encode()
    start = raw.index(b"\xa9")  # inside the first é: the whole character goes
    docs = spark.createDataFrame([("a", text), ("b", "untouched")], "doc_id string, text string")
    regions = spark.createDataFrame([("a", start, 9)], "doc_id string, start bigint, length bigint")
    got = {r.doc_id: (r.text, r.removed_fraction) for r in remove_regions(docs, regions).collect()}
    kept, removed = winnow.remove_ranges(raw, [(start, 9)])
    assert got["a"] == (kept.decode(), removed / len(raw))
    assert (got["a"][0], removed) == ("keep é keep", 10)  # [5, 15): "é BOILER "
    assert got["b"] == ("untouched", 0.0)


# --- jobs -----------------------------------------------------------------------------------


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "part.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return path


def _rows(docs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"url": d, "body": t, "host": f"h{len(t) % 2}"} for d, t in docs]
    out.append({"url": "nullbody", "host": "h0"})
    out.append({"url": "huge", "body": "x" * 5000, "host": "h0"})
    return out


def _table(spark, path: Path) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.parquet(str(path))
    return sorted(tuple(r) for r in df.select(sorted(df.columns)).collect())


@pytest.fixture(scope="module")
def boilerplate_run(spark, docs, tmp_path_factory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("boilerplate")
    src = _write_jsonl(tmp / "in", _rows(docs))
    cfg = load_boilerplate_config(
        str(ROOT / "conf/boilerplate.toml"),
        input=str(src),
        output=str(tmp / "out"),
        input_format="jsonl",
        id_col="url",
        text_col="body",
        max_text_bytes=4000,
        kgram_bytes=K,
        window=W,
    )
    return cfg, boilerplate_job.run(spark, cfg)


def test_boilerplate_job_end_to_end(spark, docs, boilerplate_run) -> None:  # type: ignore[no-untyped-def]
    cfg, s = boilerplate_run
    out = Path(cfg.output)
    assert (s.input, s.rejected) == (len(docs) + 2, 2)
    reasons = sorted(r.reason for r in spark.read.parquet(str(out / "rejects")).collect())
    assert reasons == ["null text", "text larger than 4000 bytes"]
    index = winnow.Index(K, W)
    for doc_id, text in docs:
        index.add(doc_id, text)
    want = sorted((d, r.pos, r.length) for d, t in docs for r in index.cover(t, 3, 5))
    assert _table(spark, out / "regions") == sorted((d, n, p) for d, p, n in want)
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
        got = _table(spark, tmp_path / "other" / name)
        assert got == _table(spark, Path(cfg.output) / name), name


def test_spans_job_pairs_and_provenance(spark, docs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    texts = dict(docs)
    src = _write_jsonl(tmp_path / "in", _rows(docs))
    pairs = [("d0", "d5"), ("d1", "d5"), ("d2", "d6"), ("d0", "missing")]
    spark.createDataFrame(pairs, "a string, b string").write.parquet(str(tmp_path / "pairs"))
    common = {
        "input_format": "jsonl",
        "id_col": "url",
        "text_col": "body",
        "kgram_bytes": K,
        "window": W,
    }
    cfg = load_spans_config(
        input=str(src), pairs=str(tmp_path / "pairs"), output=str(tmp_path / "o1"), **common
    )
    s = spans_job.run(spark, cfg)
    assert (s.pairs, s.pairs_missing_docs, s.rejected) == (4, 1, 1)
    want = sorted(
        (a, b, x.pos_a, x.pos_b, x.length)
        for a, b in pairs[:3]
        for x in winnow.overlaps(texts[a], texts[b], K, W)
    )
    got = spark.read.parquet(str(tmp_path / "o1" / "spans"))
    assert (
        sorted(
            tuple(r) for r in got.select("a_id", "b_id", "a_start", "b_start", "length").collect()
        )
        == want
    )
    summary = {
        (r.a_id, r.b_id): r for r in spark.read.parquet(str(tmp_path / "o1/pair_summary")).collect()
    }
    assert set(summary) == set(pairs[:3])
    d2 = summary[("d2", "d6")]
    assert d2.b_fraction > 0.9 and d2.a_fraction > 0.9  # d6 is d2 twice
    old = spark.conf.get("spark.sql.shuffle.partitions")
    try:  # the same tables whatever the shuffle partitioning
        spark.conf.set("spark.sql.shuffle.partitions", "1")
        spans_job.run(spark, replace(cfg, output=str(tmp_path / "o1p")))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", old)
    for name in ("spans", "pair_summary", "rejects"):
        assert _table(spark, tmp_path / "o1p" / name) == _table(spark, tmp_path / "o1" / name)

    queries = [{"url": "q0", "body": texts["d0"][10:200] + " zz " + texts["d3"][:150] + FOOTER}]
    qsrc = _write_jsonl(tmp_path / "q", queries)
    corpus = [(r["url"], r["body"]) for r in _rows(docs) if "body" in r]
    index = winnow.Index(K, W)
    for doc_id, text in corpus:
        index.add(doc_id, text)
    want2 = sorted(
        (m.id, m.query_pos, m.doc_pos, m.length) for m in index.matches(queries[0]["body"])
    )
    occurrences = Counter(h for _, t in corpus for h in winnow.text(t, K, W).hash.tolist())
    hot = {h for h, n in occurrences.items() if n > 2}
    for max_doc_freq in (1000, 2):
        out = tmp_path / f"o{max_doc_freq}"
        cfg2 = load_spans_config(
            input=str(src), query=str(qsrc), output=str(out), max_doc_freq=max_doc_freq, **common
        )
        s2 = spans_job.run(spark, cfg2)
        got2 = sorted(
            (r.b_id, r.a_start, r.b_start, r.length)
            for r in spark.read.parquet(str(out / "spans")).collect()
            if r.a_id == "q0"
        )
        report = json.loads((out / "report.json").read_text())
        assert report["mode"] == "provenance" and report["counts"]["hot_hashes"] == s2.hot_hashes
        assert report["spark"]["lineage_cuts"] == "local" and report["spark"]["jobs"] > 0
        if max_doc_freq == 1000:  # nothing the query holds is skipped: Index.matches exactly
            # ... except the "huge" row's one hash, repeated ~5,000 times in one document
            assert got2 == want2
            assert s2.hot_hashes == len([h for h, n in occurrences.items() if n > 1000]) == 1
        else:  # the footer's hashes (4 documents) are skipped: no footer spans remain
            assert s2.hot_hashes == len(hot) > 0
            footer_docs = {f"d{i}" for i in range(9, 13)}
            assert any(m[0] in footer_docs for m in want2)
            footer_at = len(queries[0]["body"].encode()) - len(FOOTER.encode())
            assert not [g for g in got2 if g[0] in footer_docs and g[1] >= footer_at]


def test_spans_job_bad_pairs_and_config(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = _write_jsonl(tmp_path / "in", [{"url": "a", "body": "text"}])
    spark.createDataFrame([("a", 1)], "x string, y int").write.parquet(str(tmp_path / "bad"))
    cfg = load_spans_config(
        input=str(src),
        pairs=str(tmp_path / "bad"),
        output=str(tmp_path / "o"),
        input_format="jsonl",
        id_col="url",
        text_col="body",
    )
    with pytest.raises(InputError, match="has neither columns a, b"):
        spans_job.run(spark, cfg)
    assert not (tmp_path / "o" / "_MANIFEST.json").exists()
    with pytest.raises(ConfigError, match="config key 'pairs'"):
        load_spans_config(input="i", output="o")
    with pytest.raises(ConfigError, match="config key 'kgram_bytes'"):
        load_spans_config(input="i", output="o", query="q", kgram_bytes=0)
    with pytest.raises(ConfigError, match="config key 'min_run'"):
        load_boilerplate_config(input="i", output="o", min_run=-1)


def test_top_passages_survive_cuts_inside_characters(spark) -> None:  # type: ignore[no-untyped-def]
    text = "ab é footer shared by all é end"
    docs = spark.createDataFrame([(f"d{i}", text) for i in range(3)], "doc_id string, text string")
    start = text.encode().index(b"\xa9")  # the second byte of the first é
    regions = spark.createDataFrame(
        [(f"d{i}", start, 20) for i in range(3)], "doc_id string, start bigint, length bigint"
    )
    rows = top_passages(docs, regions, 5).collect()
    want = text.encode()[start : start + 20].decode("utf-8", "replace")
    assert [(r.passage, r.length, r.docs) for r in rows] == [(want, 20, 3)]
    assert want.startswith("\ufffd")
