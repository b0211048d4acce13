"""stages.winnowing equals the kernels: winnow.text, overlaps, Index.matches and
Index.cover; covered bytes and removed regions keep valid UTF-8."""

from __future__ import annotations

import random

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F
from winnow_corpus import KGRAM_BYTES, WINDOW, winnow_docs, words

from neardup_udfs.kernels import winnow
from neardup_udfs.stages.winnowing import (
    aligned_spans,
    cover_regions,
    covered_bytes,
    doc_freq,
    fingerprints,
    remove_regions,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str]]:
    return winnow_docs()


def _frame(spark, docs: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    return spark.createDataFrame(docs, "doc_id string, text string")


def test_fingerprints_equal_the_kernel(spark, docs) -> None:  # type: ignore[no-untyped-def]
    got = fingerprints(_frame(spark, docs), KGRAM_BYTES, WINDOW)
    rows = []
    for doc_id, text in docs:
        fp = winnow.text(text, KGRAM_BYTES, WINDOW)
        for j, (pos, h) in enumerate(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True)):
            rows.append((doc_id, j, pos, h - (1 << 64) if h >= 1 << 63 else h))
    want = spark.createDataFrame(rows, got.schema)
    assert_df_equality(got, want, ignore_row_order=True)
    assert got.where(F.col("doc_id").isin("d7", "d8")).count() == 0  # too short: no rows


def test_binary_text_fingerprints_by_bytes(spark) -> None:  # type: ignore[no-untyped-def]
    data = b"caf\xc3\xa9 \xff\xfe invalid utf-8 bytes are fingerprinted as they are"
    df = spark.createDataFrame([("b", bytearray(data))], "doc_id string, text binary")
    got = [
        (r.pos, r.hash & (2**64 - 1))
        for r in fingerprints(df, KGRAM_BYTES, WINDOW).orderBy("j").collect()
    ]
    fp = winnow.text(data, KGRAM_BYTES, WINDOW)
    assert got == list(zip(fp.pos.tolist(), fp.hash.tolist(), strict=True))


def test_aligned_spans_equal_overlaps_per_pair(spark, docs) -> None:  # type: ignore[no-untyped-def]
    texts = dict(docs)
    pairs = [("d0", "d5"), ("d1", "d5"), ("d2", "d6"), ("d6", "d2"), ("d0", "d1"), ("d7", "d0")]
    fps = fingerprints(_frame(spark, docs), KGRAM_BYTES, WINDOW)
    wanted = spark.createDataFrame([(b, a) for a, b in pairs], "q_id string, d_id string")
    got = sorted(
        (r.d_id, r.q_id, r.d_start, r.q_start, r.length)
        for r in aligned_spans(fps, fps, KGRAM_BYTES, pairs=wanted).collect()
    )
    want = sorted(
        (a, b, s.pos_a, s.pos_b, s.length)
        for a, b in pairs
        for s in winnow.overlaps(texts[a], texts[b], KGRAM_BYTES, WINDOW)
    )
    assert got == want and len(want) > 5


def test_aligned_spans_equal_index_matches(spark, docs) -> None:  # type: ignore[no-untyped-def]
    corpus = docs[:9]
    rng = random.Random(11)
    queries = [
        ("q0", docs[0][1][20:200] + " zz " + docs[3][1][:120]),
        ("q1", docs[6][1] + words(rng, 10)),
        ("q2", words(rng, 30)),
    ]
    index = winnow.Index(KGRAM_BYTES, WINDOW)
    for doc_id, text in corpus:
        index.add(doc_id, text)
    q = fingerprints(_frame(spark, queries), KGRAM_BYTES, WINDOW)
    c = fingerprints(_frame(spark, corpus), KGRAM_BYTES, WINDOW)
    got = sorted(
        (r.q_id, r.d_id, r.q_start, r.d_start, r.length)
        for r in aligned_spans(q, c, KGRAM_BYTES).collect()
    )
    want = sorted(
        (qid, m.id, m.query_pos, m.doc_pos, m.length)
        for qid, text in queries
        for m in index.matches(text)
    )
    assert got == want and len(want) > 5


def test_cover_regions_equal_index_cover(spark, docs) -> None:  # type: ignore[no-untyped-def]
    index = winnow.Index(KGRAM_BYTES, WINDOW)
    for doc_id, text in docs:
        index.add(doc_id, text)
    fps = fingerprints(_frame(spark, docs), KGRAM_BYTES, WINDOW)
    for min_docs, min_run in ((3, 5), (2, 1), (4, 0)):
        got = sorted(
            tuple(r)
            for r in cover_regions(fps, doc_freq(fps), KGRAM_BYTES, min_docs, min_run).collect()
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
    fps = fingerprints(df, KGRAM_BYTES, WINDOW).join(df.select("doc_id", "host"), "doc_id")
    got = sorted(
        tuple(r)
        for r in cover_regions(fps, doc_freq(fps, "host"), KGRAM_BYTES, 2, 3, "host").collect()
    )
    want = []
    for host in ("even", "odd"):
        index = winnow.Index(KGRAM_BYTES, WINDOW)
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
