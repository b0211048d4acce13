"""WARC and WET input for the jobs: the same clusters as the same documents given as JSON
lines, every record accounted for, damaged files reported by how much they lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boilerplate as boilerplate_job
import dedup as dedup_job
import pytest
from dedup_corpus import planted
from warc_corpus import (
    BROTLI_PAGE,
    JAPANESE_PAGE,
    SHIFT_JIS_PAGE,
    Crawl,
    add_charset_twins,
    add_odd_records,
    corrupt,
    record_id,
    write_documents,
    write_wet,
)
from warcio.archiveiterator import ArchiveIterator

from neardup_udfs.config import ConfigError, load_boilerplate_config, load_config
from neardup_udfs.io.readers import InputError, open_uri, read_warc
from neardup_udfs.io.warc import WarcOptions
from neardup_udfs.runtime import Cache, Checked, read_checked

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent

CORPUS = planted(n_families=8, n_singles=12, seed=11)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Crawl, Path, int, int]:
    """Three .warc.gz files holding the planted corpus as HTML pages (with their request
    records), one with every odd kind of record and one corrupt member."""
    root = tmp_path_factory.mktemp("crawl") / "2026-11-30"
    root.mkdir()
    crawl = Crawl()
    docs = CORPUS.docs
    thirds = [docs[i::3] for i in range(3)]
    for i, part in enumerate(thirds):
        w = write_documents(root / f"part-{i}.warc.gz", part, crawl)
        if i == 1:
            add_odd_records(w)
        w.close()
    # damage one page of part-2: it is lost, reported, and the rest of the file is read
    w2_names = [name for name, _ in thirds[2]]
    victim = w2_names[3]
    path = root / "part-2.warc.gz"
    offsets = _offsets(path)
    start = offsets[victim]
    end = min(o for o in offsets.values() if o > start)
    corrupt(path, start)
    del crawl.documents[record_id(victim)]
    return crawl, root, start, end - start


def _offsets(path: Path) -> dict[str, int]:
    """name -> member offset of each response record of a generated file (ids are derived
    from names, so map them back)."""
    names = {record_id(n): n for n, _ in CORPUS.docs}
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        out = {}
        for r in it:
            rid = r.rec_headers.get_header("WARC-Record-ID")
            out[names.get(rid, rid)] = it.get_record_offset()
    return out


def _dedup(spark, src: Path, out: Path, **overrides: Any) -> dedup_job.Summary:  # type: ignore[no-untyped-def]
    cfg = load_config(
        str(ROOT / "conf/dedup.toml"),
        input=str(src),
        output=str(out),
        outputs=("docs", "clusters", "rejects", "samples"),
        **overrides,
    )
    return dedup_job.run(spark, cfg)


def _rows(spark, path: Path) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.parquet(str(path))
    return sorted(tuple(r) for r in df.collect())


def test_read_warc_rows_match_the_records(spark, crawl) -> None:  # type: ignore[no-untyped-def]
    c, root, start, lost = crawl
    df = read_warc(spark, str(root), WarcOptions())
    rows = {r.doc_id: r for r in df.collect()}
    good = {k: r.text for k, r in rows.items() if r.read_error is None}
    assert good == c.documents
    assert good[record_id("brotli")] == BROTLI_PAGE  # Content-Encoding: br, on the executors
    for rid, reason in c.rejected.items():
        assert rows[rid].read_error == reason
    damaged = [r for r in rows.values() if r.read_error == "corrupt data"]
    assert len(damaged) == 1 and damaged[0].lost_bytes == lost
    assert damaged[0].doc_id == f"{damaged[0].path}@{start}"
    assert damaged[0].path.endswith("part-2.warc.gz")


def test_dedup_on_warc_reads_the_same_documents_as_jsonl(spark, crawl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The job's read stage gives the WARC crawl's documents exactly as a JSON-lines file of
    them would (ids and texts), so every later stage sees the same input; the job run on the
    crawl keeps the WARC columns and accounts for every record."""
    c, root, _, lost = crawl
    s = _dedup(spark, root, tmp_path / "warc", input_format="warc")
    jsonl = tmp_path / "docs.jsonl"
    with open(jsonl, "w", encoding="utf-8") as fh:
        for rid, text in sorted(c.documents.items()):
            fh.write(json.dumps({"id": rid, "body": text}) + "\n")
    read = {}
    for fmt, path, extra in [
        ("warc", root, {}),
        ("jsonl", jsonl, {"id_col": "id", "text_col": "body"}),
    ]:
        cfg = load_config(input=str(path), output="o", input_format=fmt, **extra)
        cache = Cache()
        try:
            read[fmt] = sorted(
                (r.doc_id, r.text)
                for r in read_checked(spark, cfg, cache).good.select("doc_id", "text").collect()
            )
        finally:
            cache.release()
    assert read["warc"] == read["jsonl"] == sorted(c.documents.items())
    kept = spark.read.parquet(str(tmp_path / "warc" / "docs"))
    clustered = spark.read.parquet(str(tmp_path / "warc" / "clusters"))
    assert kept.count() == clustered.where("is_representative").count() == s.kept
    assert {"url", "warc_date", "http_status", "content_type", "path", "offset"} <= set(
        kept.columns
    )
    assert "read_error" not in kept.columns and "lost_bytes" not in kept.columns
    # every record accounted for: the documents, and one reject per other record or range
    assert s.input == len(c.documents) + len(c.rejected) + 1
    assert s.rejected == len(c.rejected) + 1
    assert s.kept + s.removed + s.rejected == s.input
    report = json.loads((tmp_path / "warc" / "report.json").read_text())
    assert report["input"]["unreadable_bytes"] == lost
    assert report["input"]["files"] == 3
    by_reason = report["input"]["rejects_by_reason"]
    assert by_reason["corrupt data"] == 1
    assert by_reason["warc request record (not a document)"] == len(CORPUS.docs)
    assert by_reason["content type image/png is not a document type"] == 1
    assert by_reason["undecodable payload (corrupt brotli data)"] == 1
    assert "undecodable payload (AttributeError)" not in by_reason
    assert sum(by_reason.values()) == s.rejected
    # the planted families were found (the corrupt page's family lost a member, not more)
    clusters = {
        r.cluster_id for r in spark.read.parquet(str(tmp_path / "warc" / "clusters")).collect()
    }
    assert s.clusters >= 6 and len(clusters) >= 6


def test_charset_twins_are_exact_duplicates_and_the_override_is_counted(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Byte-identical UTF-8 pages, one declared Shift_JIS, one UTF-8: the same text, so one
    exact-duplicate group; report.json counts the record decoded against its charset, and
    docs/ says which kept record was."""
    (tmp_path / "in").mkdir()
    crawl = Crawl()
    singles = [d for d in CORPUS.docs if d[0].startswith("single")][:6]
    w = write_documents(tmp_path / "in" / "a.warc.gz", singles, crawl, with_requests=False)
    ids = add_charset_twins(w)
    w.close()
    read, got = _read_texts(spark, tmp_path / "in", "warc")
    assert got == crawl.documents
    assert got[ids["twin-sjis"]] == got[ids["twin-utf8"]] == JAPANESE_PAGE
    assert got[ids["real-sjis"]] == SHIFT_JIS_PAGE
    assert read.stats["charset_overridden"] == 1

    out = tmp_path / "out"
    s = _dedup(spark, tmp_path / "in", out, input_format="warc")
    assert s.input == len(singles) + 3 and s.rejected == 0
    assert s.exact_duplicates == 1
    clusters = {r.doc_id: r for r in spark.read.parquet(str(out / "clusters")).collect()}
    twins = [clusters[ids["twin-sjis"]], clusters[ids["twin-utf8"]]]
    assert twins[0].cluster_id == twins[1].cluster_id
    assert sorted(t.is_representative for t in twins) == [False, True]
    real = clusters[ids["real-sjis"]]
    assert real.is_representative and real.cluster_id != twins[0].cluster_id
    report = json.loads((out / "report.json").read_text())
    assert report["input"]["charset_overridden"] == 1
    assert report["input"]["unreadable_bytes"] == 0
    docs = {r.doc_id: r for r in spark.read.parquet(str(out / "docs")).collect()}
    assert ids["real-sjis"] in docs and not docs[ids["real-sjis"]].charset_overridden
    kept = next(docs[i] for i in (ids["twin-sjis"], ids["twin-utf8"]) if i in docs)
    assert kept.text == JAPANESE_PAGE
    assert kept.charset_overridden == (kept.doc_id == ids["twin-sjis"])


def _read_texts(spark, path: Path, fmt: str) -> tuple[Checked, dict[str, str]]:  # type: ignore[no-untyped-def]
    """The input read as the jobs read it, and its accepted documents' texts by id."""
    cfg = load_config(input=str(path), output="o", input_format=fmt)
    cache = Cache()
    try:
        read = read_checked(spark, cfg, cache)
        return read, {r.doc_id: r.text for r in read.good.collect()}
    finally:
        cache.release()


def test_wet_input_is_read_as_documents(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "in").mkdir()
    crawl = Crawl()
    write_wet(tmp_path / "in" / "a.warc.wet.gz", CORPUS.docs[:30], crawl)
    read, got = _read_texts(spark, tmp_path / "in", "wet")
    assert (read.n_good, read.n_rejected) == (30, 1)  # the warcinfo record is rejected
    assert got == crawl.documents
    assert read.stats["rejects_by_reason"] == {"warc warcinfo record (not a document)": 1}


def test_id_col_url_and_the_html_extractor(spark, crawl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c, root, _, _ = crawl
    s = _dedup(
        spark,
        root / "part-0.warc.gz",
        tmp_path / "out",
        input_format="warc",
        id_col="url",
        html_extractor="resiliparse",
    )
    docs = spark.read.parquet(str(tmp_path / "out" / "docs"))
    row = docs.first()
    assert row is not None and row.doc_id == row.url and row.doc_id.startswith("http://")
    assert "<p>" not in row.text
    # the WARC-Record-ID is not lost to --id-col: docs/ and clusters/ carry it
    assert row.warc_record_id.startswith("<urn:uuid:")
    clusters = spark.read.parquet(str(tmp_path / "out" / "clusters"))
    ids = {r.doc_id: r.warc_record_id for r in clusters.collect()}
    assert ids and all(v and v.startswith("<urn:uuid:") for v in ids.values())
    assert ids[row.doc_id] == row.warc_record_id
    # a request shares its response's URL: it is rejected for its type, not as a duplicate
    reasons = {r.reason for r in spark.read.parquet(str(tmp_path / "out" / "rejects")).collect()}
    assert reasons == {"warc request record (not a document)"}
    assert s.kept + s.removed + s.rejected == s.input


def test_boilerplate_job_reads_warc(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    footer = "Subscribe to the Harbour Gazette newsletter for the week's stories every Friday."
    docs = [
        (f"p{i}", f"Story {i} about the {i}th bridge and its painters.\n\n{footer}")
        for i in range(5)
    ]
    (tmp_path / "in").mkdir()
    write_documents(tmp_path / "in" / "a.warc.gz", docs, Crawl()).close()
    cfg = load_boilerplate_config(
        str(ROOT / "conf/boilerplate.toml"),
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        input_format="warc",
    )
    s = boilerplate_job.run(spark, cfg)
    assert s.input == 10 and s.rejected == 5
    cleaned = spark.read.parquet(str(tmp_path / "out" / "cleaned")).collect()
    assert len(cleaned) == 5
    assert all("newsletter" not in r.text and "<html>" in r.text for r in cleaned)


def test_missing_path_and_bad_options(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="does not exist"):
        read_warc(spark, str(tmp_path / "nowhere"), WarcOptions())
    with pytest.raises(ConfigError, match="html_extractor"):
        load_config(input="i", output="o", input_format="warc", html_extractor="lynx")
    with pytest.raises(ConfigError, match="warc_content_types"):
        load_config(input="i", output="o", input_format="warc", warc_content_types=())
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a.warc.gz").write_bytes(b"not a warc")
    with pytest.raises(InputError, match="--id-col 'host'"):
        _dedup(spark, tmp_path / "w", tmp_path / "o", input_format="warc", id_col="host")


def test_open_uri_reads_local_file_uris(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "a b.warc"
    p.write_bytes(b"12345")
    fh, size = open_uri(p.as_uri())
    with fh:
        assert size == 5 and fh.read() == b"12345"
    fh, size = open_uri("file:" + str(p).replace(" ", "%20"))
    with fh:
        assert size == 5
