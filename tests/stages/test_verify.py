"""stages.verify: the similarities (estimated, exact, hybrid) and distances of candidate
pairs equal the kernels'; scored candidates (stages.candidates' first-band rule) are the
pairs verify scores, each once."""

from __future__ import annotations

import pytest
from dedup_corpus import Corpus, planted
from dedup_runs import TOKEN_LESS

from neardup_udfs.kernels import minhash
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme
from neardup_udfs.presets import resolve
from neardup_udfs.stages.candidates import (
    band_keys,
    candidates,
    first_band_counts,
    scored_candidates,
)
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.normalize import prepare
from neardup_udfs.stages.verify import estimate_margin, verify

pytestmark = pytest.mark.spark

MASK = 2**64 - 1


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return planted()


def test_token_less_texts_are_no_evidence_of_similarity(spark) -> None:  # type: ignore[no-untyped-def]
    """MinHash: a text without a token has the empty shingle set, gets no band key (so it is
    nobody's candidate), and two such texts have exact Jaccard 0, not 1."""
    pipe = resolve("semblance", normalize="web")
    docs = prepare(spark.createDataFrame(TOKEN_LESS[:3], "doc_id string, text string"), pipe)
    sketches = sketch(docs, pipe)
    assert band_keys(sketches, pipe, None).count() == 0
    pairs = spark.createDataFrame(
        [("cjk-punctuation", "emoji"), ("emoji", "symbols")], "a string, b string"
    )
    checked = verify(
        pairs, sketches, pipe, max_distance=0, threshold=0.0, verification="exact", texts=docs
    )
    assert sorted((r.a, r.b, r.similarity) for r in checked.collect()) == [
        ("cjk-punctuation", "emoji", 0.0),
        ("emoji", "symbols", 0.0),
    ]


def test_minhash_band_keys_and_verification_equal_the_kernels(spark) -> None:  # type: ignore[no-untyped-def]
    pipe = resolve("semblance", threshold=0.5)
    base = "the quick brown fox jumps over the lazy dog near the quiet river bank today"
    texts = [base, base.replace("lazy", "sleepy"), "nothing in common with the others here at all"]
    texts += ["HOLY MACRO!", "HOLY MACRO!"]  # no 3-shingle: exact Jaccard 0, not 1
    df = spark.createDataFrame(
        [(f"d{i}", t) for i, t in enumerate(texts)], "doc_id string, text string"
    )
    sk = sketch(df, pipe)
    sigs = pipe.signature_batch(texts)
    keys = pipe.band_keys_batch(sigs)
    for r in band_keys(sk, pipe, None).collect():
        assert r.key & MASK == int(keys[int(r.doc_id[1:]), r.band])
    pairs = spark.createDataFrame(
        [("d0", "d1"), ("d0", "d2"), ("d3", "d4"), ("d0", "d3")], "a string, b string"
    )
    got = {
        (r.a, r.b): r.similarity
        for r in verify(
            pairs, sk, pipe, max_distance=0, threshold=0.0, verification="estimate"
        ).collect()
    }
    assert got[("d0", "d1")] == minhash.jaccard(sigs[0], sigs[1])
    assert got[("d0", "d2")] == minhash.jaccard(sigs[0], sigs[2])
    exact = verify(
        pairs, sk, pipe, max_distance=0, threshold=0.0, verification="exact", texts=df
    ).collect()
    from neardup_udfs.kernels.shingle import word_shingles

    sets = [set(word_shingles(t, 3)) for t in texts]
    want = {
        (f"d{i}", f"d{j}"): len(sets[i] & sets[j]) / len(sets[i] | sets[j]) if sets[i] else 0.0
        for i, j in ((0, 1), (0, 2), (3, 4), (0, 3))
    }
    assert {(r.a, r.b): r.similarity for r in exact} == want
    # hybrid: near the threshold the exact Jaccard decides, far above it the estimate
    est, m = minhash.jaccard(sigs[0], sigs[1]), estimate_margin(pipe.param("k"))
    one = spark.createDataFrame([("d0", "d1")], "a string, b string")
    for t, similarity in ((want[("d0", "d1")] - 0.01, want[("d0", "d1")]), (est - m - 0.01, est)):
        rows = verify(
            one, sk, pipe, max_distance=0, threshold=t, verification="hybrid", texts=df
        ).collect()
        assert [(r.a, r.b, r.similarity) for r in rows] == [("d0", "d1", similarity)]
    assert abs(est - want[("d0", "d1")]) < m
    assert 0 < want[("d0", "d1")] < 1


def test_scored_candidates_are_every_candidate_once_with_its_estimate(spark, corpus) -> None:  # type: ignore[no-untyped-def]
    """The first-band rule against the bucket rule: the same pairs, hot buckets (stars,
    chunked) included, each once, with the estimate ``verify`` gives them."""
    pipe = resolve("semblance", k=125, bands=25, rows=5)
    docs = corpus.docs[:120] + [(f"copy{i}", corpus.docs[0][1]) for i in range(7)]
    sk = sketch(spark.createDataFrame(docs, "doc_id string, text string"), pipe).persist()
    for hot in (3, 5, 1000):
        old = candidates(band_keys(sk, pipe, None), hot, keep=lambda df: df.persist())
        want = verify(old.pairs, sk, pipe, max_distance=0, threshold=0.0, verification="estimate")
        new = scored_candidates(sk, pipe, hot, keep=lambda df: df.persist())
        got = [(r.a, r.b, r.similarity) for r in new.pairs.collect()]
        assert len(got) == len({(a, b) for a, b, _ in got}), "a pair scored twice"
        assert sorted(got) == sorted((r.a, r.b, r.similarity) for r in want.collect())
        assert sorted(new.hot_buckets.collect()) == sorted(old.hot_buckets.collect())
        if hot == 3:
            assert old.hot_buckets.count() > 0  # the copies make hot buckets in every band
        verified = new.pairs.where("similarity >= 0.5")
        counted = first_band_counts(new.pairs, verified).collect()
        per_band = {r.band: (r.candidates, r.verified) for r in counted}
        firsts = {r.band for r in new.pairs.select("band").distinct().collect()}
        assert set(per_band) == firsts and sum(c for c, _ in per_band.values()) == len(got)
        assert sum(v for _, v in per_band.values()) == verified.count()
        old.buckets.unpersist()
        new.buckets.unpersist()
    sk.unpersist()


def test_scored_hamming_candidates_are_every_candidate_once_with_its_distance(
    spark, corpus
) -> None:  # type: ignore[no-untyped-def]
    """SimHash: the first-table rule against the bucket rule, for multi-table keys, ditto's
    k + 1 blocks and sampled keys: the same pairs, stars of hot buckets included, each once,
    with the distance the fingerprints give; verify keeps those within k, with their table,
    and the per-table report counts each pair once."""
    pipe = resolve("ditto/2")
    docs = corpus.docs[:120] + [(f"copy{i}", corpus.docs[0][1] + f" {i}") for i in range(7)]
    sk = sketch(spark.createDataFrame(docs, "doc_id string, text string"), pipe).persist()
    for scheme, hot in ((Scheme(6, 3), 3), (Scheme(4, 3), 1000), (SampledScheme(20, 40, 3), 4)):
        old = candidates(band_keys(sk, pipe, scheme), hot, keep=lambda df: df.persist())
        want = verify(old.pairs, sk, pipe, max_distance=64, threshold=0.0, verification="estimate")
        new = scored_candidates(sk, pipe, hot, keep=lambda df: df.persist(), scheme=scheme)
        got = [(r.a, r.b, r.distance) for r in new.pairs.collect()]
        assert len(got) == len({(a, b) for a, b, _ in got}), "a pair scored twice"
        assert sorted(got) == sorted((r.a, r.b, r.distance) for r in want.collect())
        assert len(got) > 0
        assert sorted(new.hot_buckets.collect()) == sorted(old.hot_buckets.collect())
        if hot == 3:
            assert old.hot_buckets.count() > 0  # the copies share keys in every table
        kept = verify(new.pairs, sk, pipe, max_distance=3, threshold=0.0, verification="estimate")
        assert kept.columns == ["a", "b", "band", "distance"]
        assert sorted((r.a, r.b, r.distance) for r in kept.collect()) == sorted(
            (a, b, d) for a, b, d in got if d <= 3
        )
        counted = first_band_counts(new.pairs, kept).collect()
        assert sum(r.candidates for r in counted) == len(got)
        assert sum(r.verified for r in counted) == kept.count()
        old.buckets.unpersist()
        new.buckets.unpersist()
    sk.unpersist()
