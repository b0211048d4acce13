"""The dedup job end to end on a planted corpus: the greedy oracle, union-find, the same
result whatever the partitioning, reruns, default ids, chains, token-less pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import dedup as dedup_job
import pytest
from dedup_corpus import Corpus, pairs_of, planted
from dedup_runs import run_dedup
from pyspark.sql import functions as F

from neardup_udfs.config import load_config
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels import minhash
from neardup_udfs.kernels.hamming_index import Index
from neardup_udfs.kernels.unionfind import UnionFind
from neardup_udfs.presets import resolve
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.verify import estimate_margin
from tests.greedy_oracle import oracle, oracle_clusters
from tests.spark_settings import spark_conf

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


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
