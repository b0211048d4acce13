"""The dedup job: stages on tiny DataFrames, then run() end to end on a planted corpus."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import dedup as dedup_job
import numpy as np
import pytest
from chispa import assert_df_equality
from dedup_corpus import Corpus, pairs_of, planted
from pyspark.sql import functions as F

import neardup_udfs
from neardup_udfs.config import load_config
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels import minhash
from neardup_udfs.kernels.hamming_index import Index, block_keys
from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme
from neardup_udfs.kernels.unionfind import UnionFind
from neardup_udfs.presets import resolve
from neardup_udfs.stages.candidates import (
    band_keys,
    candidates,
    first_band_counts,
    scored_candidates,
)
from neardup_udfs.stages.exact import NO_TOKENS_KEY, exact_groups, exact_keys, led
from neardup_udfs.stages.fingerprint import document_features, sketch
from neardup_udfs.stages.normalize import is_empty, prepare
from neardup_udfs.stages.rejects import split_rejects
from neardup_udfs.stages.verify import estimate_margin, verify
from tests.greedy_oracle import oracle, oracle_clusters
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent

MASK = 2**64 - 1


# --- stages ---------------------------------------------------------------------------------


def test_rejects_have_reasons_and_nothing_is_lost(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [
        ("a", "fine"),
        (None, "no id"),
        ("b", None),
        ("c", "x" * 50),
        ("d", "one"),
        ("d", "two"),
        ("e", "ok"),
    ]
    df = spark.createDataFrame(rows, "doc_id string, text string")
    split = split_rejects(df, "text", max_text_bytes=20)
    good = sorted(r.doc_id for r in split.good.collect())
    rejects = sorted((r.doc_id or "", r.reason) for r in split.rejects.collect())
    assert good == ["a", "d", "e"]
    assert rejects == [
        ("", "null doc_id"),
        ("b", "null text"),
        ("c", "text larger than 20 bytes"),
        ("d", "duplicate doc_id"),
    ]
    assert [r.text for r in split.good.where("doc_id = 'd'").collect()] == ["one"]
    numbers = spark.createDataFrame([("a", 1), ("b", 2)], "doc_id string, text int")
    bad = split_rejects(numbers, "text", 100)
    assert bad.good.count() == 0
    assert {r.reason for r in bad.rejects.collect()} == {"text column is int, not a string"}


def test_exact_groups_lead_by_smallest_id(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [
        ("b", "Hello   World"),
        ("a", "<p>hello world</p>"),
        ("c", "other text"),
        ("d", "hello world"),
    ]
    df = spark.createDataFrame(rows, "doc_id string, text string")
    ditto = resolve("ditto/2")
    got = exact_groups(df, ditto)
    expected = spark.createDataFrame(
        [("a", "a"), ("b", "a"), ("c", "c"), ("d", "a")], "doc_id string, leader string"
    )
    assert_df_equality(
        got.select("doc_id", "leader"), expected, ignore_row_order=True, ignore_nullable=True
    )
    keys = {r.doc_id: r.exact_key for r in got.collect()}  # the group's key, as the kernel's
    assert keys == dict(
        zip([d for d, _ in rows], ditto.exact_keys([t for _, t in rows]), strict=True)
    )
    assert keys["a"] == keys["b"] == keys["d"] != keys["c"]
    # For semblance the canonical form is the token sequence: punctuation does not matter.
    sem = exact_groups(
        spark.createDataFrame(
            [("x", "Hello, world!"), ("y", "hello world")], "doc_id string, text string"
        ),
        resolve("semblance"),
    )
    assert {r.leader for r in sem.collect()} == {"x"}


# texts without a word token: the preset's canonical form (its token sequence) is empty
TOKEN_LESS = [
    ("emoji", "\U0001f600\U0001f600\U0001f389"),
    ("cjk-punctuation", "\u3002\u3001\u300c\u300d"),
    ("symbols", "+++ ### ~~~"),
    ("arrows-1", "\u2192 \u2190 \u2194 \u2713"),
    ("arrows-2", "\u2192 \u2190 \u2194 \u2713"),  # byte-identical to arrows-1
]
WORDED = [("story-1", "The harbour storm closed the bridge."), ("story-2", "the harbour storm")]
TEXT_PRESETS = ["semblance", "semblance-simhash", "ditto/2", "fingerprint", "anchor"]


def every_text_pipeline(test: Any) -> Any:
    """Parametrize ``test`` over every text preset, with and without web normalization."""
    by_normalize = pytest.mark.parametrize("normalize", ["web", "none"])
    return by_normalize(pytest.mark.parametrize("preset", TEXT_PRESETS)(test))


@every_text_pipeline
def test_token_less_texts_are_exact_duplicates_only_of_the_same_text(
    spark, preset: str, normalize: str
) -> None:  # type: ignore[no-untyped-def]
    """Under every text preset: texts without a token are each their own group unless their
    prepared texts are byte-identical (under web normalization, also a page that shows the
    same text); texts with tokens keep the preset's key."""
    pipe = resolve(preset, normalize=normalize)
    rows = TOKEN_LESS + WORDED
    if normalize == "web":
        rows = [*rows, ("arrows-html", "<p>\u2192 \u2190 \u2194   \u2713</p>")]
    docs = prepare(spark.createDataFrame(rows, "doc_id string, text string"), pipe)
    got = {r.doc_id: r for r in exact_groups(docs, pipe).collect()}
    expected = {d: "arrows-1" if d.startswith("arrows") else d for d, _ in rows}
    assert {d: r.leader for d, r in got.items()} == expected
    token_less = {got[d].exact_key for d, _ in TOKEN_LESS}
    assert len(token_less) == 4 and NO_TOKENS_KEY not in token_less
    assert all(len(k) == 32 and int(k, 16) >= 0 for k in token_less)
    worded = pipe.exact_keys([t for _, t in WORDED])
    assert [got[d].exact_key for d, _ in WORDED] == worded  # unchanged for texts with tokens
    assert dict(exact_keys(docs, pipe).collect()) == {d: r.exact_key for d, r in got.items()}


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
    checked = verify(pairs, sketches, pipe, k=0, threshold=0.0, verification="exact", texts=docs)
    assert sorted((r.a, r.b, r.similarity) for r in checked.collect()) == [
        ("cjk-punctuation", "emoji", 0.0),
        ("emoji", "symbols", 0.0),
    ]


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
        for r in verify(pairs, sk, pipe, k=0, threshold=0.0, verification="estimate").collect()
    }
    assert got[("d0", "d1")] == minhash.jaccard(sigs[0], sigs[1])
    assert got[("d0", "d2")] == minhash.jaccard(sigs[0], sigs[2])
    exact = verify(pairs, sk, pipe, k=0, threshold=0.0, verification="exact", texts=df).collect()
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
        rows = verify(one, sk, pipe, k=0, threshold=t, verification="hybrid", texts=df).collect()
        assert [(r.a, r.b, r.similarity) for r in rows] == [("d0", "d1", similarity)]
    assert abs(est - want[("d0", "d1")]) < m
    assert 0 < want[("d0", "d1")] < 1


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


def test_scored_candidates_are_every_candidate_once_with_its_estimate(spark, corpus) -> None:  # type: ignore[no-untyped-def]
    """The first-band rule against the bucket rule: the same pairs, hot buckets (stars,
    chunked) included, each once, with the estimate ``verify`` gives them."""
    pipe = resolve("semblance", k=125, bands=25, rows=5)
    docs = corpus.docs[:120] + [(f"copy{i}", corpus.docs[0][1]) for i in range(7)]
    sk = sketch(spark.createDataFrame(docs, "doc_id string, text string"), pipe).persist()
    for hot in (3, 5, 1000):
        old = candidates(band_keys(sk, pipe, None), hot, keep=lambda df: df.persist())
        want = verify(old.pairs, sk, pipe, k=0, threshold=0.0, verification="estimate")
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
        want = verify(old.pairs, sk, pipe, k=64, threshold=0.0, verification="estimate")
        new = scored_candidates(sk, pipe, hot, keep=lambda df: df.persist(), scheme=scheme)
        got = [(r.a, r.b, r.distance) for r in new.pairs.collect()]
        assert len(got) == len({(a, b) for a, b, _ in got}), "a pair scored twice"
        assert sorted(got) == sorted((r.a, r.b, r.distance) for r in want.collect())
        assert len(got) > 0
        assert sorted(new.hot_buckets.collect()) == sorted(old.hot_buckets.collect())
        if hot == 3:
            assert old.hot_buckets.count() > 0  # the copies share keys in every table
        kept = verify(new.pairs, sk, pipe, k=3, threshold=0.0, verification="estimate")
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


# --- end to end -----------------------------------------------------------------------------


def _write_corpus(
    tmp: Path, corpus: Corpus, files: int = 3, extra: list[dict[str, Any]] | None = None
) -> Path:
    src = tmp / "in"
    src.mkdir()
    records = [{"url": i, "body": t, "crawl": n} for n, (i, t) in enumerate(corpus.docs)]
    records += extra or []
    for f in range(files):
        with open(src / f"part-{f}.jsonl", "w") as fh:
            for r in records[f::files]:
                fh.write(json.dumps(r) + "\n")
    return src


def run_dedup(spark, src: Path, out: Path, **overrides: Any) -> dedup_job.Summary:  # type: ignore[no-untyped-def]
    """One run of the job (``overrides`` may replace the outputs too); checks that it leaves
    nothing cached behind."""
    settings = {"outputs": ("docs", "clusters", "pairs", "rejects", "samples"), **overrides}
    cfg = load_config(
        str(ROOT / "conf/dedup.toml"),
        input=str(src),
        output=str(out),
        input_format="jsonl",
        id_col="url",
        text_col="body",
        **settings,
    )
    summary = dedup_job.run(spark, cfg)
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()
    return summary


def _clusters(spark, out: Path) -> list[list[str]]:  # type: ignore[no-untyped-def]
    groups: dict[str, list[str]] = {}
    for r in spark.read.parquet(str(out / "clusters")).collect():
        groups.setdefault(r.cluster_id, []).append(r.doc_id)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def _table(spark, out: Path, name: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.parquet(str(out / name))
    return sorted(tuple(r) for r in df.select(sorted(df.columns)).collect())


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return planted()


@pytest.fixture(scope="module")
def minhash_run(spark, corpus: Corpus, tmp_path_factory) -> tuple[Path, Path, dedup_job.Summary]:  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("minhash")
    extra = [
        {"url": "nulltext", "crawl": 0},
        {"url": "huge", "body": "w " * 60_000, "crawl": 0},
        {"url": corpus.docs[0][0], "body": "a second record with a taken id", "crawl": 0},
    ]
    src = _write_corpus(tmp, corpus, extra=extra)
    out = tmp / "out"
    return src, out, run_dedup(spark, src, out, max_text_bytes=100_000)


def test_minhash_end_to_end(spark, corpus: Corpus, minhash_run) -> None:  # type: ignore[no-untyped-def]
    src, out, s = minhash_run
    n = len(corpus.docs) + 3
    assert s.input == n and s.rejected == 3
    assert s.kept + s.removed + s.rejected == n
    reasons = sorted(r.reason for r in spark.read.parquet(str(out / "rejects")).collect())
    assert reasons == ["duplicate doc_id", "null text", "text larger than 100000 bytes"]
    got = pairs_of(_clusters(spark, out))
    truth = pairs_of(corpus.families)
    precision = len(got & truth) / len(got)
    recall = len(got & truth) / len(truth)
    assert precision >= 0.99 and recall >= 0.99, (precision, recall)
    clusters = spark.read.parquet(str(out / "clusters"))
    reps = F.sum(F.col("is_representative").cast("int"))
    per_cluster = clusters.groupBy("cluster_id").agg(reps).collect()
    assert all(r[1] == 1 for r in per_cluster)  # exactly one representative each
    assert clusters.where("is_representative and doc_id != cluster_id").count() == 0
    docs = spark.read.parquet(str(out / "docs"))
    assert docs.count() == s.kept and set(docs.columns) >= {"url", "body", "crawl"}
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["kept"] == s.kept and report["pipeline"]["id"] == (
        "web/1+semblance/1;bands=25,k=125,rows=5"
    )
    assert (out / "_MANIFEST.json").exists()
    assert report["spark"]["shuffle_partitions_from"] == "config"  # the test session's 2
    # every Spark job is counted, the writes' too (five outputs: five jobs at least)
    assert report["spark"]["shuffle_partitions"] == 2 and report["spark"]["jobs"] >= 5
    assert report["spark"]["adaptive_from"] == "config"  # the test session turns it off
    bands = report["bands"]
    # every pair counts once, in the first band that produced it: most come from band 0
    assert [b["band"] for b in bands] == sorted({b["band"] for b in bands})
    assert set(b["band"] for b in bands) <= set(range(25)) and len(bands) > 1
    assert sum(b["candidates"] for b in bands) == s.candidates
    assert sum(b["verified"] for b in bands) == s.verified
    assert all(b["verified"] <= b["candidates"] for b in bands)
    assert max(bands, key=lambda b: b["candidates"])["band"] == 0


def test_samples_and_report_html(spark, corpus: Corpus, minhash_run) -> None:  # type: ignore[no-untyped-def]
    _, out, s = minhash_run
    texts = dict(corpus.docs)
    clusters = spark.read.parquet(str(out / "clusters"))
    sizes = {r[0]: r[1] for r in clusters.groupBy("cluster_id").count().collect()}
    samples = spark.read.parquet(str(out / "samples")).collect()
    shown = {r.cluster_id for r in samples}
    assert 0 < len(shown) <= 10 and all(sizes[c] > 1 for c in shown)
    assert max(sizes[c] for c in shown) == max(sizes.values())  # the largest come first
    for c in shown:  # every member of a shown cluster, with its own text, one representative
        rows = [r for r in samples if r.cluster_id == c]
        assert len(rows) == sizes[c] and sum(r.is_representative for r in rows) == 1
        assert all(r.text == texts[r.doc_id] and not r.truncated for r in rows)
    page = (out / "report.html").read_text()
    assert f'id="count-input" class="num" data-value="{s.input}"' in page
    assert "<mark>" in page


def test_sample_clusters_truncates_and_is_deterministic(spark) -> None:  # type: ignore[no-untyped-def]
    from neardup_udfs.stages.samples import sample_clusters

    rows = [(f"d{i}", f"c{i // 3}", i % 3 == 0, 1.0) for i in range(30)] + [
        ("solo", "solo", True, 1.0)
    ]
    clusters = spark.createDataFrame(
        rows, "doc_id string, cluster_id string, is_representative boolean, similarity double"
    )
    texts = spark.createDataFrame(
        [(r[0], "x" * (5 + int(r[0][1:] or 0) if r[0] != "solo" else 1)) for r in rows],
        "doc_id string, text string",
    )
    got = sample_clusters(clusters, texts, largest=2, sample=3, max_chars=10).collect()
    again = sample_clusters(
        clusters.repartition(7), texts.repartition(3), largest=2, sample=3, max_chars=10
    ).collect()
    assert got == again
    shown = sorted({r.cluster_id for r in got})
    assert len(shown) == 5 and "solo" not in shown and {"c0", "c1"} <= set(shown)
    for r in got:
        full = 5 + int(r.doc_id[1:])
        assert r.text == "x" * min(full, 10) and r.truncated == (full > 10)
    binary = texts.select("doc_id", F.col("text").cast("binary").alias("text"))  # text input
    decoded = sample_clusters(clusters, binary, largest=2, sample=3, max_chars=10).collect()
    assert [(r.doc_id, r.text, r.truncated) for r in decoded] == [
        (r.doc_id, r.text, r.truncated) for r in got
    ]


def _naive_minhash_edges(
    corpus: Corpus, pipe: Any, verification: str, threshold: float = 0.7
) -> list[tuple[str, str, float]]:
    """All pairs sharing a band key whose Jaccard (estimated or exact) is >= threshold, with
    it, both on the texts as the pipeline normalizes them; texts without a shingle never
    pair."""
    from neardup_udfs.kernels.shingle import word_shingles

    ids = [i for i, _ in corpus.docs]
    texts = pipe.normalize_batch([t for _, t in corpus.docs])
    sigs = pipe.signature_batch(texts, normalized=True)
    keys = pipe.band_keys_batch(sigs)
    sets = [set(word_shingles(t, 3)) for t in texts]
    edges = []
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            if not (sets[i] and sets[j] and (keys[i] == keys[j]).any()):
                continue
            exact = len(sets[i] & sets[j]) / len(sets[i] | sets[j])
            estimate = minhash.jaccard(sigs[i], sigs[j])
            sim = {"exact": exact, "estimate": estimate}.get(verification)
            if sim is None:  # hybrid: the estimate decides outside [t - m, t + m)
                m = estimate_margin(pipe.param("k"))
                sure = estimate >= threshold + m or estimate < threshold - m
                sim = estimate if sure else exact
            if sim >= threshold:
                edges.append((ids[i], ids[j], sim))
    return edges


def _union_find_clusters(ids: list[str], edges: list[tuple[str, str, float]]) -> list[list[str]]:
    place = {d: i for i, d in enumerate(ids)}
    uf = UnionFind(len(ids))
    for a, b, _ in edges:
        uf.union(place[a], place[b])
    groups: dict[int, list[str]] = {}
    for i, doc_id in enumerate(ids):
        groups.setdefault(uf.find(i), []).append(doc_id)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def test_minhash_equals_the_greedy_oracle(spark, corpus: Corpus, minhash_run) -> None:  # type: ignore[no-untyped-def]
    """Default config: recall banding (25 x 5 of 125 slots), hybrid verification, anchored
    clustering: the greedy pass over the verified pairs in id order, by hand."""
    _, out, _ = minhash_run
    pipe = resolve("semblance", normalize="web", k=125, bands=25, rows=5)
    edges = _naive_minhash_edges(corpus, pipe, "hybrid")
    rank = dict.fromkeys((d for d, _ in corpus.docs), 0)
    assert _clusters(spark, out) == oracle_clusters(edges, rank)
    got = spark.read.parquet(str(out / "clusters")).collect()
    want = oracle(edges, rank)
    for r in got:  # every member's similarity is its own verified one to its representative
        if r.doc_id in want:
            rep, similarity = want[r.doc_id]
            assert r.cluster_id == rep and r.similarity == pytest.approx(similarity), r


def test_connected_estimate_semblance_banding_equals_union_find(
    spark, corpus: Corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    src = _write_corpus(tmp_path, corpus)
    out = tmp_path / "out"
    s = run_dedup(
        spark, src, out, verification="estimate", banding="semblance", clustering="connected"
    )
    assert s.pipeline == "web/1+semblance/1"
    pipe = resolve("semblance", normalize="web", threshold=0.7)
    edges = _naive_minhash_edges(corpus, pipe, "estimate")
    want = _union_find_clusters([d for d, _ in corpus.docs], edges)
    assert _clusters(spark, out) == want


def test_same_result_whatever_the_partitioning(spark, minhash_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The module's run (2 shuffle partitions, adaptive execution off, its core on the
    driver: engine auto) against one on Spark stages with every partitioning knob moved at once: 5
    shuffle partitions with adaptive execution and broadcast joins (which coalesce and
    re-plan joins), Arrow batches of 16 rows (a task's rows in several batches), input
    splits of 4 KB (so one file is read by several tasks) and the cluster stage in parallel
    rounds alone."""
    src, out, _ = minhash_run
    settings = {
        "spark.sql.shuffle.partitions": "5",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.autoBroadcastJoinThreshold": "10485760",  # Spark's default
        "spark.sql.execution.arrow.maxRecordsPerBatch": "16",
        "spark.sql.files.maxPartitionBytes": "4096",
    }
    other = tmp_path / "out"
    with spark_conf(spark, **settings):
        s = run_dedup(spark, src, other, max_text_bytes=100_000, max_driver_edges=0, engine="spark")
    assert s.rounds > 0 and s.driver_edges == 0
    for name in ("clusters", "docs", "rejects", "pairs"):
        assert _table(spark, other, name) == _table(spark, out, name), name


def test_simhash_equals_the_greedy_oracle_on_the_kernel_index(
    spark, corpus: Corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """ditto's Near gives every pair within k; single link would chain them (the planted
    families of ditto's fingerprints run together), anchored keeps each within k."""
    src = _write_corpus(tmp_path, corpus, files=2)
    out = tmp_path / "out"
    s = run_dedup(spark, src, out, method="simhash", max_distance=3)
    index = Index(3)
    ditto = resolve("ditto/2", normalize="web")  # the job's default pipeline
    assert s.pipeline == ditto.id == "web/1;cjk=0+ditto/2"
    fps = {doc_id: ditto.fingerprint(text) for doc_id, text in corpus.docs}
    for doc_id, fp in fps.items():
        index.add(doc_id, fp)
    edges = [(d, m.id, m.distance) for d, fp in fps.items() for m in index.near(fp, 3)]
    rank = dict.fromkeys(fps, 0)
    assert _clusters(spark, out) == oracle_clusters(edges, rank, closer="lower")
    assert len(index.clusters(3, 2)) < len(_clusters(spark, out))  # single link chains
    assert s.kept + s.removed == len(corpus.docs) and s.chained == 0
    rows = spark.read.parquet(str(out / "clusters")).collect()
    assert all(r.distance <= 3 for r in rows)  # each member within k of its own representative


def test_rerun_replaces_and_failure_leaves_no_manifest(spark, minhash_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    shutil.copytree(minhash_run[1], out)  # a finished run that wrote pairs/ and samples/
    assert (out / "pairs").exists() and (out / "_MANIFEST.json").exists()
    cfg2 = load_config(
        input=str(ROOT / "samples"),
        output=str(out),
        method="simhash",
        outputs=("docs", "clusters", "rejects"),
    )
    dedup_job.run(spark, cfg2)
    # not asked for any more: removed, not left stale
    assert not (out / "pairs").exists() and not (out / "samples").exists()
    assert json.loads((out / "report.json").read_text())["config"]["method"] == "simhash"
    missing = load_config(
        input=str(tmp_path / "nope" / "*.jsonl"),
        output=str(out),
        input_format="jsonl",
        id_col="url",
    )
    with pytest.raises(InputError, match="input path .*nope.* does not exist"):
        dedup_job.run(spark, missing)
    assert not (out / "_MANIFEST.json").exists()


def test_default_ids_are_file_and_record_index(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text(
        "".join(json.dumps({"text": f"doc {i}"}) + "\n" for i in range(50))
    )
    from neardup_udfs.io.readers import read_input

    def ids() -> list[tuple[str, str]]:
        df, _ = read_input(spark, str(src), "jsonl", None, "text")
        return sorted((r.doc_id.rsplit("/", 1)[1], r.text) for r in df.collect())

    with spark_conf(spark, **{"spark.sql.files.maxPartitionBytes": "64"}):
        small = ids()
    assert small == ids()
    assert ("a.jsonl:7", "doc 7") in small and len(small) == 50


def test_representative_rules_choose_the_first_member(spark) -> None:  # type: ignore[no-untyped-def]
    """select_representatives: min_id, longest (ties: smaller id) and earliest (nulls last);
    one representative per component, a component of one represents itself."""
    from neardup_udfs.stages.select import select_representatives

    members = spark.createDataFrame(
        [("a", "a", 100, "2024-03-01"), ("b", "b", 130, "2024-01-15"), ("c", "c", 130, None),
         ("d", "a", 100, "2024-06-01"), ("z", "z", 40, "2023-01-01")],
        "doc_id string, leader string, __length int, __order string",
    )  # fmt: skip
    labels = spark.createDataFrame(
        [("a", "a"), ("b", "a"), ("c", "a")], "node string, label string"
    )
    fp = {"a": 0, "b": 1, "c": 3, "z": -1}
    sketches = spark.createDataFrame(list(fp.items()), "doc_id string, fingerprint bigint")
    chosen = {}
    for rule in ("min_id", "longest", "earliest"):
        sel = select_representatives(
            members, labels, sketches, kind="simhash", rule=rule, floor=10, no_chaining=False
        )
        rows = {r.doc_id: r for r in sel.clusters.collect()}
        sel.persisted.unpersist()
        assert {d: r.is_representative for d, r in rows.items() if r.is_representative} == {
            rows["a"].cluster_id: True,
            "z": True,
        }
        assert rows["d"].cluster_id == rows["a"].cluster_id and rows["d"].distance == (
            bin(fp["a"] ^ fp[rows["a"].cluster_id]).count("1")
        )
        chosen[rule] = rows["a"].cluster_id
    assert chosen == {"min_id": "a", "longest": "b", "earliest": "b"}


def test_anchored_rules_and_exact_groups(spark) -> None:  # type: ignore[no-untyped-def]
    """cluster(): a group takes its first member's place in the rule's order and that member
    is the one kept; the others share the group's fate and score."""
    from neardup_udfs.stages.cluster import cluster

    members = spark.createDataFrame(
        [("a", "a", 100, "2024-03-01"), ("d", "a", 120, None), ("b", "b", 130, "2024-01-15"),
         ("c", "c", 90, None), ("e", "c", 90, "2025-01-01"), ("z", "z", 40, "2023-01-01")],
        "doc_id string, leader string, __length int, __order string",
    )  # fmt: skip
    verified = spark.createDataFrame(
        [("a", "b", 0.8), ("b", "c", 0.9)], "a string, b string, similarity double"
    )
    sketches = spark.createDataFrame([], "doc_id string, signature array<bigint>")
    want = {  # rule -> {doc: (cluster_id, is_representative, similarity)}
        # a first: b is removed, c is kept, and b goes to the closer of them (c, 0.9)
        "min_id": {"a": ("a", True, 1.0), "d": ("a", False, 1.0), "b": ("c", False, 0.9),
                   "c": ("c", True, 1.0), "e": ("c", False, 1.0)},
        # b (130) first: groups a and c are removed in its favour
        "longest": {"b": ("b", True, 1.0), "a": ("b", False, 0.8), "d": ("b", False, 0.8),
                    "c": ("b", False, 0.9), "e": ("b", False, 0.9)},
        # b (Jan 2024) first; group c would be kept as e (dated), but b removes it
        "earliest": {"b": ("b", True, 1.0), "a": ("b", False, 0.8), "d": ("b", False, 0.8),
                     "c": ("b", False, 0.9), "e": ("b", False, 0.9)},
    }  # fmt: skip
    for rule, expected in want.items():
        got = cluster(
            members, verified, sketches, kind="minhash", rule=rule, clustering="anchored",
            max_rounds=5, max_driver_edges=0, floor=0.7,
        ).clusters.collect()  # fmt: skip
        rows = {r.doc_id: (r.cluster_id, r.is_representative, r.similarity) for r in got}
        assert rows.pop("z") == ("z", True, 1.0)
        assert rows == expected, rule


def test_a_chain_removes_only_what_is_near_the_kept_document(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A ~ B (J 0.77), B ~ C (0.77), A and C apart (0.58): anchored keeps A and C and
    removes B; single link removes C too, in favour of a document it is not near."""
    words = [f"word{i}" for i in range(50)]
    a = words[:40]
    b = a[:35] + words[40:45]
    c = words[45:50] + b[5:]
    rows = [{"url": u, "body": " ".join(t)} for u, t in (("A", a), ("B", b), ("C", c))]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = run_dedup(spark, src, tmp_path / "anchored", verification="exact")
    got = {r.doc_id: r for r in spark.read.parquet(str(tmp_path / "anchored/clusters")).collect()}
    assert (s.kept, s.removed, s.driver_edges) == (2, 1, 2) and s.rounds == 0  # fits the driver
    assert got["B"].cluster_id == "A" and got["B"].similarity == pytest.approx(33 / 43)
    assert got["C"].is_representative and got["A"].is_representative
    report = json.loads((tmp_path / "anchored/report.json").read_text())
    assert report["config"]["clustering"] == "anchored"
    assert {k: report["counts"][k] for k in ("rounds", "driver_edges", "removed")} == {
        "rounds": 0,
        "driver_edges": 2,
        "removed": 1,
    }
    page = (tmp_path / "anchored/report.html").read_text()
    assert 'id="count-driver-edges" class="num" data-value="2"' in page
    # single link, the same graph at the stage: C goes with A, 0.58 from it (chained)
    from neardup_udfs.stages.cluster import cluster

    texts = spark.createDataFrame(
        [(r["url"], r["body"]) for r in rows], "doc_id string, text string"
    )
    members = texts.select(
        "doc_id",
        F.col("doc_id").alias("leader"),
        F.length("text").alias("__length"),
        F.lit(None).cast("string").alias("__order"),
    )
    verified = spark.createDataFrame(
        [("A", "B", 33 / 43), ("B", "C", 33 / 43)], "a string, b string, similarity double"
    )
    got = cluster(
        members, verified, sketch(texts, resolve("semblance")), kind="minhash", rule="min_id",
        clustering="connected", max_rounds=50, max_driver_edges=0, floor=0.7,
    )  # fmt: skip
    single = {r.doc_id: r.cluster_id for r in got.clusters.collect()}
    assert single == {"A": "A", "B": "A", "C": "A"} and got.chained == 1
    for df in got.persisted:
        df.unpersist()


def test_representative_rule_reaches_the_stage(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The job passes the text's byte length to the rule (``longest``)."""
    base = " ".join(f"word{i} common text here" for i in range(40))
    rows = [
        {"url": "a", "body": base},
        {"url": "b", "body": base + " extra tail words for length"},
        {"url": "c", "body": base + " tail"},
        {"url": "z", "body": "an unrelated short document about gardening"},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "longest"
    s = run_dedup(spark, src, out, method="simhash", max_distance=10, representative="longest")
    assert (s.kept, s.removed) == (2, 2)
    reps = {r.cluster_id for r in spark.read.parquet(str(out / "clusters")).collect()}
    assert reps == {"b", "z"}


def test_identical_documents_make_no_pairs(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    n = 400  # far more copies than hot_bucket_size: a bucket of them would become a star
    src = tmp_path / "in.jsonl"
    text = "the very same boilerplate page copied again and again across the crawl"
    src.write_text("".join(json.dumps({"url": f"u{i:05d}", "body": text}) + "\n" for i in range(n)))
    s = run_dedup(spark, src, tmp_path / "out", hot_bucket_size=50)
    assert (s.exact_duplicates, s.candidates, s.verified) == (n - 1, 0, 0)
    assert (s.kept, s.removed, s.clusters) == (1, n - 1, 1)


@pytest.mark.parametrize(
    "method,preset", [("minhash", "semblance"), ("simhash", "semblance-simhash")]
)
def test_token_less_pages_are_kept_unless_identical(spark, tmp_path: Path, method, preset) -> None:  # type: ignore[no-untyped-def]
    """The default pipeline (semblance, web normalization), and its SimHash, on a folder of
    pages without a word or too short to shingle: the different ones are all kept; of two
    pages showing the same text, one is removed as its exact duplicate; nothing else pairs
    them (no shingle: an empty MinHash set, a SimHash of 0, no evidence of similarity)."""
    src = tmp_path / "in"
    src.mkdir()
    pages = {
        "emoji.txt": "\U0001f600\U0001f600\U0001f389\n",
        "cjk-punctuation.txt": "\u3002\u3001\u300c\u300d\n",
        "symbols.txt": "+++ ### ~~~\n",
        "hello.txt": "hello world\n",
        "bye.txt": "bye now\n",
        "arrows.txt": "\u2192 \u2190 \u2194 \u2713\n",
        "arrows.html": "<html><body><p>\u2192 \u2190 \u2194 \u2713</p></body></html>",
    }
    for name, text in pages.items():
        (src / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    cfg = load_config(
        str(ROOT / "conf/dedup.toml"),
        input=str(src),
        output=str(out),
        input_format="text",
        outputs=("docs", "clusters", "pairs", "rejects"),
        method=method,
        preset=preset,
    )
    s = dedup_job.run(spark, cfg)
    assert s.pipeline.startswith(f"web/1+{preset}/1")
    assert (s.input, s.rejected, s.empty) == (7, 0, 0)
    assert (s.exact_duplicates, s.candidates, s.verified) == (1, 0, 0)
    assert (s.kept, s.removed) == (6, 1)
    assert s.kept + s.removed + s.rejected == s.input
    clusters = {
        r.doc_id.rsplit("/", 1)[1]: r for r in spark.read.parquet(str(out / "clusters")).collect()
    }
    for name in ("emoji.txt", "cjk-punctuation.txt", "symbols.txt", "hello.txt", "bye.txt"):
        assert clusters[name].is_representative, name
        assert clusters[name].cluster_id == clusters[name].doc_id, name
    arrows = [clusters["arrows.txt"], clusters["arrows.html"]]
    assert arrows[0].cluster_id == arrows[1].cluster_id
    assert sorted(a.is_representative for a in arrows) == [False, True]
    score = "similarity" if method == "minhash" else "distance"
    assert [a[score] for a in arrows if not a.is_representative] == [
        1.0 if method == "minhash" else 0
    ]
    kept = {r.doc_id.rsplit("/", 1)[1] for r in spark.read.parquet(str(out / "docs")).collect()}
    assert len(kept) == 6 and {"emoji.txt", "symbols.txt", "hello.txt", "bye.txt"} <= kept


def test_multi_table_keys_find_what_dittos_blocks_find(
    spark, corpus: Corpus, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The default SimHash scheme (6 blocks, 20 tables at k = 3) and ditto's k + 1 blocks
    verify exactly the same pairs (no hot bucket), from fewer candidates; the report says
    which scheme ran."""
    src = _write_corpus(tmp_path, corpus, files=2)
    runs = {}
    for blocks in (None, 4):
        out = tmp_path / f"out-{blocks}"
        s = run_dedup(
            spark,
            src,
            out,
            method="simhash",
            max_distance=3,
            hamming_blocks=blocks,
            hot_bucket_size=10**6,
        )
        runs[blocks] = (s, out, json.loads((out / "report.json").read_text())["hamming"])
    (multi, multi_out, multi_report), (ditto, ditto_out, ditto_report) = runs[None], runs[4]
    for name in ("pairs", "clusters"):
        assert _table(spark, multi_out, name) == _table(spark, ditto_out, name), name
    assert multi.verified == ditto.verified > 0
    assert multi.candidates <= ditto.candidates
    assert multi_report == {
        "blocks": 6,
        "tables": 20,
        "key_bits": [31, 33],
        "scheme": "multi-table",
        "guaranteed": True,
    }
    assert ditto_report == {
        "blocks": 4,
        "tables": 4,
        "key_bits": [16, 16],
        "scheme": "ditto k+1 blocks",
        "guaranteed": True,
    }
