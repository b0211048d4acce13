"""The persistent index: build/add/query jobs, atomic adds, version checks, the CLI's
local queries, and dedup --against equal to deduplicating old and new together."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dedup_corpus import Corpus, planted
from dedup_runs import run_dedup, run_shipped_dedup
from index_runs import run_index, write_crawl

from neardup_udfs.cli import main as cli_main
from neardup_udfs.driver.near import anchored_clusters
from neardup_udfs.index import store as index_store
from neardup_udfs.index.query import LocalIndex
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.kernels.hamming_index import Index
from neardup_udfs.kernels.lsh_forest import Forest
from neardup_udfs.presets import resolve

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]

MINHASH = resolve("semblance", normalize="web", k=125, bands=25, rows=5)  # the jobs' defaults
SIMHASH = resolve("ditto/2", normalize="web")
PLAIN_SIMHASH = resolve("ditto/2")


def _ids(spark, out: Path, name: str, col: str = "url") -> set[str]:  # type: ignore[no-untyped-def]
    return {r[0] for r in spark.read.parquet(str(out / name)).select(col).collect()}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return planted(n_families=12, n_singles=20, seed=11)


@pytest.fixture(scope="module")
def halves(corpus: Corpus) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Two crawls: every family is split across them, so the second duplicates the first."""
    rng = random.Random(3)
    old, new = [], []
    for doc in sorted(corpus.docs):
        (old if rng.random() < 0.5 else new).append(doc)
    return old, new


@pytest.fixture(scope="module")
def minhash_index(spark, halves, tmp_path_factory):  # type: ignore[no-untyped-def]
    old, new = halves
    tmp = tmp_path_factory.mktemp("mh")
    index = tmp / "index"
    s1 = run_index(spark, "build", write_crawl(tmp / "w1.jsonl", old), index, batch_id="w1")
    s2 = run_index(spark, "add", write_crawl(tmp / "w2.jsonl", new), index, batch_id="w2")
    return tmp, index, (s1, s2)


def _simhash_index(spark, tmp_path: Path, docs: list[tuple[str, str]], **settings: Any) -> Path:  # type: ignore[no-untyped-def]
    """``tmp_path / "index"``: a SimHash index built from ``docs`` (written to a.jsonl)
    with ``settings``."""
    index = tmp_path / "index"
    run_index(
        spark, "build", write_crawl(tmp_path / "a.jsonl", docs), index, method="simhash", **settings
    )
    return index


def _kernel_forest(batches: list[list[tuple[str, str]]]) -> tuple[Forest, dict[str, np.ndarray]]:
    """The single-machine Forest over the same documents, added in the index's order:
    batch by batch, ids in byte order within a batch."""
    forest = Forest(25, 5)
    sigs = {}
    for batch in batches:
        for doc_id, text in sorted(batch, key=lambda d: d[0].encode()):
            sig = MINHASH.signature_batch([text])[0]
            forest.add(doc_id, sig)
            sigs[doc_id] = sig
    return forest, sigs


def test_build_add_and_manifest(spark, minhash_index, halves) -> None:  # type: ignore[no-untyped-def]
    tmp, index, (s1, s2) = minhash_index
    old, new = halves
    assert (s1.indexed, s2.indexed, s2.index_documents) == (len(old), len(new), len(old) + len(new))
    m = index_store.open_index(str(index))
    assert [b.batch_id for b in m.batches] == ["w1", "w2"] and m.generation == 2
    assert m.pipeline_id == MINHASH.id and dict(m.shape) == {"bands": 25, "rows": 5}
    again = run_index(spark, "add", tmp / "w2.jsonl", index, batch_id="w2")
    assert again.indexed == 0 and index_store.open_index(str(index)) == m  # a no-op
    keys = spark.read.parquet(str(index / m.batches[0].dir / "keys"))
    assert sorted(r.depth for r in keys.select("depth").distinct().collect()) == [1, 2, 3, 4, 5]
    assert keys.where("band = -1").count() == len(old)  # one exact key per document


def test_similar_queries_equal_the_forest(spark, minhash_index, halves) -> None:  # type: ignore[no-untyped-def]
    tmp, index, _ = minhash_index
    old, new = halves
    forest, sigs = _kernel_forest([old, new])
    queries = [(f"q-{d}", t) for d, t in (old[:4] + new[:4])]
    queries.append(("q-unrelated", "nothing like any document in the index at all, really"))
    out = tmp / "query"
    s = run_index(
        spark, "query", write_crawl(tmp / "q.jsonl", queries), index, output=str(out), top=4
    )
    assert s.queries == len(queries)
    got: dict[str, list[tuple[str, float]]] = {}
    rows = spark.read.parquet(str(out / "results")).orderBy("query_id", "rank").collect()
    for r in rows:
        got.setdefault(r.query_id, []).append((r.doc_id, r.similarity))
    local = LocalIndex(str(index))
    for qid, text in queries:
        q = MINHASH.signature_batch([text])[0]
        want = [(d, float(np.mean(sigs[d] == q))) for d in forest.query(q, 4)]
        assert got.get(qid, []) == want, qid
        assert [(r.id, r.jaccard) for r in local.similar(q, 4)] == want, qid
    assert (out / "_MANIFEST.json").exists()


def test_near_queries_equal_ditto_index(spark, halves, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old, new = halves
    index = _simhash_index(spark, tmp_path, old, max_distance=4)
    run_index(
        spark,
        "add",
        write_crawl(tmp_path / "b.jsonl", new),
        index,
        method="simhash",
        max_distance=4,
    )
    kernel = Index(4)
    for batch in (old, new):
        for doc_id, text in sorted(batch):
            kernel.add(doc_id, SIMHASH.fingerprint(text))
    queries = old[:5] + new[:5]
    src = write_crawl(tmp_path / "q.jsonl", queries)
    local = LocalIndex(str(index))
    for k in (2, 9):  # 9 is clamped down to the index's 4
        out = tmp_path / f"near{k}"
        run_index(spark, "query", src, index, output=str(out), max_distance=k)
        spark_report = json.loads((out / "report.json").read_text())["spark"]
        assert spark_report["lineage_cuts"] == "local" and spark_report["jobs"] > 0
        got: dict[str, list[tuple[str, int]]] = {}
        for r in spark.read.parquet(str(out / "results")).orderBy("query_id", "rank").collect():
            got.setdefault(r.query_id, []).append((r.doc_id, r.distance))
        for qid, text in queries:
            fp = SIMHASH.fingerprint(text)
            want = [(m.id, m.distance) for m in kernel.near(fp, k)]
            assert got[qid] == want and [(m.id, m.distance) for m in local.near(fp, k)] == want


def test_cli_near_and_similar(minhash_index, halves, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _, index, _ = minhash_index
    old, _ = halves
    doc = tmp_path / "doc.html"  # the index's normalization applies: the page is its text
    script = "<script>var words = 'many words that are not in the document at all';</script>"
    doc.write_text(f"<html><head>{script}</head><body><p>{old[0][1]}</p></body></html>")
    assert cli_main(["similar", "--index", str(index), "--top", "3", str(doc)]) == 0
    lines = capsys.readouterr().out.splitlines()
    sig = MINHASH.signature_batch([old[0][1]])[0]
    want = [
        f"{doc}\t{r.rank}\t{r.id}\t{r.jaccard:.4f}" for r in LocalIndex(str(index)).similar(sig, 3)
    ]
    assert lines == want and len(lines) == 3 and lines[0].endswith("\t1.0000")
    # the files Hadoop listed at commit are those pyarrow lists; docs/ holds the documents
    assert cli_main(["index", "check", str(index)]) == 0
    assert "2 batch(es) by the data files recorded at commit" in capsys.readouterr().out
    assert cli_main(["near", "--index", str(index), str(doc)]) == 2  # a MinHash index
    assert "near needs a simhash index" in capsys.readouterr().err


def test_add_is_atomic(spark, halves, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    old, new = halves
    index = _simhash_index(spark, tmp_path, old)
    before = index_store.open_index(str(index))

    def crash(*args: Any, **kwargs: Any) -> None:
        raise OSError("simulated crash between the data write and the manifest write")

    src = write_crawl(tmp_path / "b.jsonl", new)
    with monkeypatch.context() as m:
        m.setattr(index_store, "commit", crash)
        with pytest.raises(OSError, match="simulated crash"):
            run_index(spark, "add", src, index, method="simhash", batch_id="b")
    assert index_store.open_index(str(index)) == before  # unchanged
    leftovers = [p.name for p in (index / "batches").iterdir()]
    assert len(leftovers) == 2  # the crashed batch's files exist but are not listed
    assert LocalIndex(str(index)).manifest.documents == len(old)
    fp = SIMHASH.fingerprint(new[0][1])
    assert new[0][0] not in {m.id for m in LocalIndex(str(index)).near(fp, 3)}
    s = run_index(spark, "add", src, index, method="simhash", batch_id="b")
    assert s.indexed == len(new) and s.index_documents == len(old) + len(new)
    after = index_store.open_index(str(index))
    assert sorted(p.name for p in (index / "batches").iterdir()) == sorted(
        b.dir.split("/")[1] for b in after.batches
    )  # the leftover is gone
    assert new[0][0] in {m.id for m in LocalIndex(str(index)).near(fp, 3)}


def test_version_mismatch_is_an_error_naming_both(spark, minhash_index, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tmp, index, _ = minhash_index
    src = tmp / "w1.jsonl"
    with pytest.raises(InputError, match=r"semblance/1;bands=25,k=125,rows=5.*ditto/2"):
        run_index(spark, "add", src, index, method="simhash", batch_id="x")
    with pytest.raises(InputError, match=r"bands=25.*bands=16"):
        run_index(spark, "add", src, index, bands=16, rows=8, batch_id="x")
    with pytest.raises(InputError, match="already holds an index"):
        run_index(spark, "build", src, index)
    built = r"built with pipeline 'web/1\+semblance/1;bands=25.*configured"
    with pytest.raises(InputError, match=built):
        run_shipped_dedup(spark, src, tmp_path / "out", threshold=0.5, against=str(index))
    with pytest.raises(InputError, match="no index at"):
        run_shipped_dedup(spark, src, tmp_path / "out", against=str(tmp_path / "missing"))
    assert [b.batch_id for b in index_store.open_index(str(index)).batches] == ["w1", "w2"]


def test_a_damaged_index_fails_before_any_work(spark, minhash_index, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """dedup --against, index add and index query on a damaged copy of an index: an
    InputError (the jobs' exit status 2) naming the damaged file or folder, raised before
    the input is read: no output folder is made and nothing is added to the index."""
    tmp, index, _ = minhash_index
    copy = tmp_path / "index"
    shutil.copytree(index, copy)  # Hadoop's .crc sidecars too
    manifest = copy / index_store.MANIFEST
    original = manifest.read_bytes()
    manifest.write_bytes(original[: len(original) // 2])  # its .crc sidecar is now stale
    out = tmp_path / "out"
    damaged = rf"index manifest \S*{index_store.MANIFEST} is damaged: its bytes do not match"
    with pytest.raises(InputError, match=damaged):
        run_shipped_dedup(spark, tmp / "w2.jsonl", out, against=str(copy))
    assert not out.exists()

    manifest.write_bytes(original)  # the sidecar matches again
    m = index_store.check_index(str(copy), HadoopStorage(spark))
    assert [sorted(b.contents or {}) for b in m.batches] == [["docs", "keys", "rejects"]] * 2
    gone = copy / m.batches[1].dir
    shutil.rmtree(gone)
    missing = rf"is damaged: batch 'w2': its folder \S*{gone.name} is missing"
    with pytest.raises(InputError, match=missing):
        run_shipped_dedup(spark, tmp / "w2.jsonl", out, against=str(copy), update_index=True)
    with pytest.raises(InputError, match=missing):
        run_index(spark, "add", tmp / "w1.jsonl", copy, batch_id="w3")
    with pytest.raises(InputError, match=missing):
        run_index(spark, "query", tmp / "w1.jsonl", copy, output=str(out))
    assert not out.exists()
    assert manifest.read_bytes() == original  # nothing added
    assert sorted(p.name for p in (copy / "batches").iterdir()) == [m.batches[0].dir[8:]]


def _weekly(spark, halves, tmp_path: Path, settings: dict[str, Any]):  # type: ignore[no-untyped-def]
    """Old and new deduplicated together (the rule prefers the older crawl), then old with
    --against INDEX --update-index (which starts the index), then new against it (adding
    to it): the new documents the combined run keeps, and the new batch's summary."""
    old, new = halves
    short = [("short-old", "tiny"), ("short-new", "tiny")]  # exact duplicates, no band keys
    old = old + short[:1] + [("copy-src", old[0][1] + " and a tail")]
    new = new + short[1:] + [("copy-new", old[0][1] + " and a tail")]
    both = tmp_path / "both.jsonl"
    both.write_text(
        write_crawl(tmp_path / "o.jsonl", old, crawl=0).read_text()
        + write_crawl(tmp_path / "n.jsonl", new, crawl=1).read_text()
    )
    run_shipped_dedup(
        spark,
        both,
        tmp_path / "combined",
        representative="earliest",
        order_col="crawl",
        outputs=("docs", "clusters"),
        **settings,
    )
    kept_together = _ids(spark, tmp_path / "combined", "docs") & {d for d, _ in new}
    index = str(tmp_path / "index")
    s1 = run_shipped_dedup(spark, tmp_path / "o.jsonl", tmp_path / "old", against=index,
                           update_index=True, **settings)  # fmt: skip
    assert s1.index_matches == 0 and s1.index_added == s1.kept  # the index starts here
    out = tmp_path / "against"
    s = run_shipped_dedup(spark, tmp_path / "n.jsonl", out, against=index, update_index=True,
                          outputs=("docs", "clusters"), **settings)  # fmt: skip
    assert _ids(spark, out, "docs") == kept_together
    assert s.index_matches > 0 and s.kept + s.removed == len(new)
    matches = spark.read.parquet(str(out / "matches"))
    assert {"short-new", "copy-new"} <= {r.doc_id for r in matches.collect()}
    assert {r.indexed_batch for r in matches.collect()} == {str(tmp_path / "o.jsonl")}
    clusters = spark.read.parquet(str(out / "clusters"))
    marked = clusters.where("indexed_id is not null")
    assert marked.where("is_representative").count() == 0 and marked.count() == s.index_matches
    report = json.loads((out / "report.json").read_text())
    assert report["index"]["matches"] == s.index_matches
    assert "page_errors" not in json.loads((out / "_MANIFEST.json").read_text())
    assert 'id="index-matches">' + f"{s.index_matches:,}" in (out / "report.html").read_text()
    m = index_store.open_index(index)
    assert m.documents == s1.kept + s.kept and s.index_added == s.kept > 0
    return s1, s


def test_against_equals_the_combined_run(spark, halves, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """dedup --against INDEX keeps exactly the new documents that deduplicating old and new
    together keeps, when the index holds what deduplicating old kept (the weekly pattern,
    --update-index) and the representative rule prefers the older documents: the greedy
    pass then decides every old document before any new one. MinHash here; SimHash in the
    next test, which goes on with the same index."""
    _weekly(spark, halves, tmp_path, {"verification": "estimate"})


def test_update_index_grows_the_index_and_reruns_are_idempotent(
    spark, halves, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The weekly pattern with SimHash and no normalization (as indexes built before it):
    against equals combined (as above); a run with the default normalization is refused,
    naming the flag; then a batch of indexed documents commits an empty batch, and the index
    stays readable after it; rerunning the new batch adds nothing twice and gives the same
    result."""
    old, new = halves
    settings: dict[str, Any] = {"method": "simhash", "max_distance": 3, "normalize": "none"}
    s1, s3 = _weekly(spark, halves, tmp_path, settings)
    index = tmp_path / "index"
    assert index_store.open_index(str(index)).normalization == "none"
    refused = r"built with normalization 'none' \(pipeline 'ditto/2'\).*Pass --normalize none"
    with pytest.raises(InputError, match=refused):
        run_shipped_dedup(
            spark, tmp_path / "n.jsonl", tmp_path / "o5", against=str(index), method="simhash"
        )
    with pytest.raises(InputError, match=refused):
        run_index(spark, "add", tmp_path / "n.jsonl", index, method="simhash", batch_id="x")
    indexed = _ids(spark, tmp_path / "old", "docs")
    again = [d for d in old if d[0] in indexed][:5]  # indexed documents, as a new batch
    c = write_crawl(tmp_path / "c.jsonl", again)
    s2 = run_shipped_dedup(
        spark, c, tmp_path / "o2", against=str(index), update_index=True, **settings
    )
    assert s2.kept == 0 and s2.index_matches == len(again) == 5
    m = index_store.open_index(str(index))
    empty = m.batches[-1]
    assert (empty.batch_id, empty.documents) == (str(c), 0)  # committed, with nothing in it
    b = tmp_path / "n.jsonl"
    rerun = run_shipped_dedup(
        spark, b, tmp_path / "o4", against=str(index), update_index=True, **settings
    )
    assert index_store.open_index(str(index)) == m  # nothing added twice
    assert (rerun.kept, rerun.index_matches) == (s3.kept, s3.index_matches)
    assert _ids(spark, tmp_path / "o4", "docs") == _ids(spark, tmp_path / "against", "docs")
    local = LocalIndex(str(index))
    for doc_id, text in [
        again[0],
        next(d for d in new if d[0] in _ids(spark, tmp_path / "against", "docs")),
    ]:
        assert doc_id in {m.id for m in local.near(PLAIN_SIMHASH.fingerprint(text), 0)}


def test_an_index_keeps_its_simhash_key_scheme(spark, halves, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Created with the default scheme (6 blocks at k = 3), the index records it; later
    batches and dedup runs against it use it, and a run asking for another is told so."""
    old, new = halves
    index = _simhash_index(spark, tmp_path, old, max_distance=3)
    manifest = index_store.open_index(str(index))
    assert dict(manifest.shape) == {"k": 3, "blocks": 6}
    src = write_crawl(tmp_path / "b.jsonl", new)
    with pytest.raises(InputError, match="hamming_blocks = 6.*hamming_blocks = 4"):
        run_index(spark, "add", src, index, method="simhash", max_distance=3, hamming_blocks=4)
    with pytest.raises(InputError, match="--hamming-blocks 6"):
        run_shipped_dedup(
            spark, src, tmp_path / "o1", method="simhash", against=str(index), hamming_blocks=4
        )
    run_shipped_dedup(spark, src, tmp_path / "o2", method="simhash", against=str(index))
    report = json.loads((tmp_path / "o2" / "report.json").read_text())
    assert report["hamming"]["blocks"] == 6 and report["index"]["matches"] >= 0
    run_index(spark, "add", src, index, method="simhash", max_distance=3, hamming_blocks=6)
    assert dict(index_store.open_index(str(index)).shape) == {"k": 3, "blocks": 6}


def test_index_matches_cluster_in_the_core_as_in_the_rounds(  # type: ignore[no-untyped-def]
    spark, halves, tmp_path: Path, monkeypatch
) -> None:
    """dedup --against: a graph within the edge budget is clustered by the core on the
    driver, index matches included (no round); forced into Spark's rounds
    (max_driver_edges = 0) it gives the same rows in every output and the same counts."""
    from neardup_udfs.runs import near as near_run

    in_core: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        in_core.append(len(kwargs["matches"].doc_id))
        return anchored_clusters(*args, **kwargs)

    monkeypatch.setattr(near_run, "anchored_clusters", spy)
    old, new = halves
    index = tmp_path / "index"
    run_index(spark, "build", write_crawl(tmp_path / "old.jsonl", old), index, batch_id="w1")
    copies = [("copy-1", old[0][1]), ("copy-2", old[0][1])]  # an indexed text, twice
    src = write_crawl(tmp_path / "new.jsonl", new + copies)
    tables, reports = {}, {}
    for name, limit in (("core", None), ("rounds", 0)):
        out = tmp_path / name
        run_dedup(spark, src, out, against=str(index), max_driver_edges=limit)
        reports[name] = json.loads((out / "report.json").read_text())
        tables[name] = {
            table: sorted(
                (json.dumps(r.asDict(), sort_keys=True, default=str)
                 for r in spark.read.parquet(str(out / table)).collect()),
            )  # fmt: skip
            for table in ("docs", "clusters", "pairs", "matches", "samples")
        }
    assert len(in_core) == 1 and in_core[0] >= 2  # the core run only, with the matches
    assert tables["core"] == tables["rounds"]
    core, rounds = reports["core"], reports["rounds"]
    assert core["cluster"]["rounds"] == 0 and rounds["cluster"]["rounds"] >= 1
    how = ("rounds", "driver_edges")
    assert {k: v for k, v in core["counts"].items() if k not in how} == {
        k: v for k, v in rounds["counts"].items() if k not in how
    }
    clusters = [json.loads(r) for r in tables["core"]["clusters"]]
    indexed = {r["doc_id"] for r in clusters if r["indexed_id"] is not None}
    assert {"copy-1", "copy-2"} <= indexed  # matched, exact copies included
    assert any(r["indexed_id"] is None and not r["is_representative"] for r in clusters)
