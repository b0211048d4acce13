"""stages.fingerprint: the fingerprint stage equals the kernel on strings and bytes,
whatever the batches, and names the rows it rejects; the one-pass features equal the stages
they replace."""

from __future__ import annotations

import numpy as np
import pytest
from chispa import assert_df_equality
from dedup_runs import TOKEN_LESS, WORDED, every_text_pipeline

import neardup_udfs
from neardup_udfs.kernels.simhash import format_hex
from neardup_udfs.presets import resolve
from neardup_udfs.stages.exact import exact_groups, led
from neardup_udfs.stages.fingerprint import document_features, fingerprint, sketch
from neardup_udfs.stages.normalize import is_empty, prepare

pytestmark = pytest.mark.spark

TEXTS = [
    "Your apple id has been locked. Please verify your account now.",
    "<p>Your Apple ID has been locked.</p> Please verify your account now!",
    "",
    "ΣΟΦΟΣ İstanbul 你好",
    "x" * 5000,
]


def _signed(fp: int) -> int:
    return fp - 2**64 if fp >= 2**63 else fp


def test_stage_equals_kernel_on_strings_and_bytes(spark) -> None:  # type: ignore[no-untyped-def]
    pipe = resolve("ditto/2")
    rows = [(f"d{i}", t) for i, t in enumerate(TEXTS)]
    rows_bin = [(f"d{i}", bytearray(t.encode())) for i, t in enumerate(TEXTS)]
    rows_bin.append(("bad", bytearray(b"caf\xe9 \xff")))
    with_bad = TEXTS + [b"caf\xe9 \xff"]
    want = {f"d{i}": neardup_udfs.fingerprint(t) for i, t in enumerate(TEXTS)}
    want["bad"] = neardup_udfs.fingerprint(with_bad[-1])
    for data, schema in [
        (rows, "doc_id string, text string"),
        (rows_bin, "doc_id string, text binary"),
    ]:
        df = spark.createDataFrame(data, schema)
        out = fingerprint(df, pipe).fingerprints.collect()
        got = {r.doc_id: r for r in out}
        for doc_id, fp in want.items():
            if doc_id not in got:
                continue
            assert got[doc_id].fingerprint == _signed(fp)
            assert got[doc_id].fingerprint_hex == format_hex(fp)
            assert got[doc_id].pipeline == "ditto/2"
        assert len(got) == len(data)


def test_batch_boundaries_do_not_matter(spark) -> None:  # type: ignore[no-untyped-def]
    pipe = resolve("ditto/2", char=3, word=1)
    rows = [(f"d{i:03d}", f"document {i} " * (i % 7)) for i in range(101)]
    df = spark.createDataFrame(rows, "doc_id string, text string").repartition(3)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    old = spark.conf.get(key)
    spark.conf.set(key, "4")
    try:
        got = fingerprint(df, pipe).fingerprints.select("doc_id", "fingerprint")
        expected = spark.createDataFrame(
            [(i, _signed(neardup_udfs.fingerprint(t, char=3, word=1))) for i, t in rows],
            "doc_id string, fingerprint bigint",
        )
        assert_df_equality(got, expected, ignore_row_order=True, ignore_nullable=True)
    finally:
        spark.conf.set(key, old)


def test_nulls_are_rejected_with_a_reason(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(
        [("a", "text"), (None, "orphan"), ("b", None)], "doc_id string, text string"
    )
    out = fingerprint(df, resolve("ditto/2"))
    assert [r.doc_id for r in out.fingerprints.collect()] == ["a"]
    rejects = sorted((r.doc_id or "", r.reason) for r in out.rejects.collect())
    assert rejects == [("", "null doc_id"), ("b", "null text")]


FEATURE_TEXTS = [
    *TOKEN_LESS,
    *WORDED,
    ("html", "<p>The harbour <b>storm</b> closed &amp; the bridge.</p><script>x()</script>"),
    ("html-copy", "The harbour storm closed & the bridge."),
    ("no-visible-text", "<script>only();</script><style>p {}</style>"),
    ("cjk", "\u6e2f\u53e3\u7684\u98ce\u66b4\u5173\u95ed\u4e86\u6865"),
    ("entity-twice", "&amp;amp; stays one level decoded"),
]


@every_text_pipeline
def test_one_pass_features_equal_the_stages_they_replace(
    spark, preset: str, normalize: str
) -> None:  # type: ignore[no-untyped-def]
    """``document_features`` + ``led`` (one pass over each text) give, per document, the
    exact key, group leader and sketch of ``prepare`` + ``exact_groups`` + ``sketch``, the
    band keys of the signature, emptiness as ``is_empty`` and the input's UTF-8 length."""
    pipe = resolve(preset, normalize=normalize)
    docs = spark.createDataFrame(FEATURE_TEXTS, "doc_id string, text string")
    prepared = prepare(docs, pipe)
    value = "fingerprint" if pipe.kind == "simhash" else "signature"
    want_groups = {
        r.doc_id: (r.exact_key, r.leader) for r in exact_groups(prepared, pipe).collect()
    }
    want_sketch = {r.doc_id: r[value] for r in sketch(prepared, pipe).collect()}
    want_empty = {
        r.doc_id: r.e for r in prepared.select("doc_id", is_empty(pipe).alias("e")).collect()
    }
    got = {r.doc_id: r for r in led(document_features(docs, pipe)).collect()}
    assert {d: (r.exact_key, r.leader) for d, r in got.items()} == want_groups
    assert {d: r[value] for d, r in got.items()} == want_sketch
    assert {d: r.empty_text for d, r in got.items()} == want_empty
    assert {d: r.length for d, r in got.items()} == {d: len(t.encode()) for d, t in FEATURE_TEXTS}
    if pipe.kind == "minhash":
        sigs = np.array([got[d].signature for d, _ in FEATURE_TEXTS], dtype=np.int64)
        keys = pipe.band_keys_batch(sigs.view(np.uint64)).view(np.int64).tolist()
        assert [got[d].band_keys for d, _ in FEATURE_TEXTS] == keys
