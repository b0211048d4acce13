"""The spans job end to end: aligned spans of given pairs equal the kernel's overlaps, a
query's provenance equals Index.matches (hot hashes skipped on request), bad pairs and
settings refused."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from job_runs import URL_BODY
from winnow_corpus import (
    FOOTER,
    KGRAM_BYTES,
    WINDOW,
    jsonl_rows,
    read_table,
    winnow_docs,
    write_jsonl,
)

from neardup_udfs.config import ConfigError, load_boilerplate_config, load_spans_config
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels import winnow
from neardup_udfs.runs import spans as spans_job

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str]]:
    return winnow_docs()


def test_spans_job_pairs_and_provenance(spark, docs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    texts = dict(docs)
    src = write_jsonl(tmp_path / "in", jsonl_rows(docs))
    pairs = [("d0", "d5"), ("d1", "d5"), ("d2", "d6"), ("d0", "missing")]
    spark.createDataFrame(pairs, "a string, b string").write.parquet(str(tmp_path / "pairs"))
    common = {
        "input_format": "jsonl",
        "id_col": "url",
        "text_col": "body",
        "kgram_bytes": KGRAM_BYTES,
        "window": WINDOW,
    }
    cfg = load_spans_config(
        input=str(src), pairs=str(tmp_path / "pairs"), output=str(tmp_path / "o1"), **common
    )
    s = spans_job.run(spark, cfg)
    assert (s.pairs, s.pairs_missing_docs, s.rejected) == (4, 1, 1)
    want = sorted(
        (a, b, x.pos_a, x.pos_b, x.length)
        for a, b in pairs[:3]
        for x in winnow.overlaps(texts[a], texts[b], KGRAM_BYTES, WINDOW)
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
        assert read_table(spark, tmp_path / "o1p" / name) == read_table(
            spark, tmp_path / "o1" / name
        )

    queries = [{"url": "q0", "body": texts["d0"][10:200] + " zz " + texts["d3"][:150] + FOOTER}]
    qsrc = write_jsonl(tmp_path / "q", queries)
    corpus = [(r["url"], r["body"]) for r in jsonl_rows(docs) if "body" in r]
    index = winnow.Index(KGRAM_BYTES, WINDOW)
    for doc_id, text in corpus:
        index.add(doc_id, text)
    want2 = sorted(
        (m.id, m.query_pos, m.doc_pos, m.length) for m in index.matches(queries[0]["body"])
    )
    occurrences = Counter(
        h for _, t in corpus for h in winnow.text(t, KGRAM_BYTES, WINDOW).hash.tolist()
    )
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
    src = write_jsonl(tmp_path / "in", [{"url": "a", "body": "text"}])
    spark.createDataFrame([("a", 1)], "x string, y int").write.parquet(str(tmp_path / "bad"))
    cfg = load_spans_config(
        input=str(src),
        pairs=str(tmp_path / "bad"),
        output=str(tmp_path / "o"),
        **URL_BODY,
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
