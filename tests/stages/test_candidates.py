"""stages.candidates: band keys equal the kernels' keys; a bucket's pairs, each once; hot
buckets become stars."""

from __future__ import annotations

import numpy as np
import pytest

import neardup_udfs
from neardup_udfs.kernels.hamming_index import block_keys
from neardup_udfs.kernels.hamming_tables import Scheme
from neardup_udfs.presets import resolve
from neardup_udfs.stages.candidates import band_keys, candidates
from neardup_udfs.stages.fingerprint import sketch

pytestmark = pytest.mark.spark

MASK = 2**64 - 1


def test_simhash_block_keys_equal_the_kernel(spark) -> None:  # type: ignore[no-untyped-def]
    pipe = resolve("ditto/2")
    texts = ["alpha beta gamma", "completely different", "", "ΣΟΦΟΣ"]
    df = spark.createDataFrame(
        [(f"d{i}", t) for i, t in enumerate(texts)], "doc_id string, text string"
    )
    sketches = sketch(df, pipe)
    keys = band_keys(sketches, pipe, Scheme(3, 2)).collect()
    fps = np.array([neardup_udfs.fingerprint(t) for t in texts], dtype=np.uint64)
    want = block_keys(fps, 2)  # ditto's k + 1 blocks: the scheme of k + 1 blocks
    for r in keys:
        assert r.key & MASK == int(want[int(r.doc_id[1:]), r.band])
    assert len(keys) == 3 * len(texts)
    for scheme in (Scheme(6, 3), Scheme(4, 2), Scheme(9, 4)):  # multi-table keys
        rows = band_keys(sketches, pipe, scheme).collect()
        table = scheme.keys(fps)
        assert len(rows) == scheme.tables * len(texts)
        for r in rows:
            assert r.key & MASK == int(table[int(r.doc_id[1:]), r.band])


def test_short_texts_get_no_band_keys(spark) -> None:  # type: ignore[no-untyped-def]
    pipe = resolve("semblance")
    rows = [("s1", "HOLY MACRO!"), ("s2", "try again"), ("long", "one two three four five")]
    df = spark.createDataFrame(rows, "doc_id string, text string")
    keyed = {r.doc_id for r in band_keys(sketch(df, pipe), pipe, None).collect()}
    assert keyed == {"long"}


def test_hot_buckets_become_stars(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [(f"d{i}", 0, 7) for i in range(6)] + [("x", 1, 5), ("y", 1, 5), ("z", 1, 6)]
    keys = spark.createDataFrame(rows, "doc_id string, band int, key bigint")
    got = candidates(keys, hot_bucket_size=3, keep=lambda df: df.persist())
    pairs = sorted((r.a, r.b) for r in got.pairs.collect())
    assert pairs == [("d0", f"d{i}") for i in range(1, 6)] + [("x", "y")]
    assert [(r.band, r.key, r.size) for r in got.hot_buckets.collect()] == [(0, 7, 6)]
    got.buckets.unpersist()


def test_candidates_are_every_pair_of_a_bucket_once(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [("r", 2, -9), ("q", 2, -9), ("p", 2, -9), ("s", 2, 9), ("q", 3, -9), ("p", 3, -9)]
    rows += [(f"m{i}", 4, 1) for i in range(4)]
    keys = spark.createDataFrame(rows, "doc_id string, band int, key bigint")
    got = candidates(keys, hot_bucket_size=4, keep=lambda df: df.persist())
    pairs = [(r.a, r.b) for r in got.pairs.collect()]
    every_m = [(f"m{i}", f"m{j}") for i in range(4) for j in range(i + 1, 4)]
    assert sorted(pairs) == sorted(every_m + [("p", "q"), ("p", "r"), ("q", "r")])
    assert got.hot_buckets.count() == 0
    got.buckets.unpersist()
