"""stages.normalize on web text: the dedup job with its default normalization on planted
families of real pages (plain, wrapped in minimal markup, re-saved with the site's CSS and
scripts and a banner) and of real Chinese and Japanese text, scored against an independent
extraction; pages with no visible text; plain English, which the web normalization leaves
as it is. One job run for the module."""

from __future__ import annotations

import json
from pathlib import Path

import dedup as dedup_job
import pytest
from bench_web_corpora import build_small
from lib.planted_families import CORPORA
from lib.web_truth import THRESHOLD, ground_truth, read_clusters, score, threshold_tag

from neardup_udfs.config import load_config
from neardup_udfs.presets import resolve
from neardup_udfs.stages.exact import exact_groups
from neardup_udfs.stages.fingerprint import sketch
from neardup_udfs.stages.normalize import prepare

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]

SCRIPT_ONLY = [
    ("empty-a", "<html><head><script>location.href='/a'</script></head><body></body></html>"),
    ("empty-b", "<html><head><script>location.href='/b'</script></head><body> </body></html>"),
]


@pytest.fixture(scope="module")
def web_run(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("web")
    built = {name: (c := build_small(name), ground_truth(c)) for name in CORPORA}
    src = tmp / "web.jsonl"
    with open(src, "w", encoding="utf-8") as fh:
        for corpus, _ in built.values():
            for d in corpus.docs:
                fh.write(json.dumps({"id": d.doc_id, "text": d.text}, ensure_ascii=False) + "\n")
        for doc_id, text in SCRIPT_ONLY:
            fh.write(json.dumps({"id": doc_id, "text": text}) + "\n")
    config = load_config(
        str(ROOT / "conf/dedup.toml"),
        input=str(src),
        output=str(tmp / "out"),
        input_format="jsonl",
        id_col="id",
        text_col="text",
    )
    summary = dedup_job.run(spark, config)
    return built, summary, tmp / "out", src


@pytest.mark.parametrize("name", CORPORA)
def test_every_near_copy_resolved_and_every_removal_precise(web_run, name: str) -> None:  # type: ignore[no-untyped-def]
    built, _, out, _ = web_run
    corpus, truth = built[name]
    clusters = read_clusters(out)
    mine = {d.doc_id for d in corpus.docs}
    got = score(corpus, truth, None, clusters={k: v for k, v in clusters.items() if k in mine})
    assert got[f"pairs_j{threshold_tag(THRESHOLD + 0.05)}"] > 0
    assert (got["resolved"], got["removal_precision"]) == (1.0, 1.0), got
    assert got["removed_unrelated_but_banner"] == 0 and got["rejected"] == 0
    assert got["removed"] > 0


def test_pages_without_visible_text_are_kept_and_counted(web_run) -> None:  # type: ignore[no-untyped-def]
    built, summary, out, _ = web_run
    clusters = read_clusters(out)
    for doc_id, _ in SCRIPT_ONLY:
        assert clusters[doc_id] == (doc_id, True)  # each its own cluster, kept
    assert summary.empty == 2
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["empty"] == 2
    assert 'id="count-empty" class="num" data-value="2">2<' in (out / "report.html").read_text()
    assert report["pipeline"]["id"].startswith("web/1+semblance/1;")
    assert summary.pipeline == report["pipeline"]["id"]
    n = sum(len(c.docs) for c, _ in built.values()) + len(SCRIPT_ONLY)
    assert summary.kept + summary.removed == n


def test_outputs_keep_the_documents_as_read(spark, web_run) -> None:  # type: ignore[no-untyped-def]
    _, _, out, src = web_run
    read = {json.loads(line)["id"]: json.loads(line)["text"] for line in src.open()}
    docs = spark.read.parquet(str(out / "docs")).select("id", "text").collect()
    assert docs and all(r.text == read[r.id] for r in docs)
    assert any("<" in r.text for r in docs)  # HTML stays HTML in docs/


def test_plain_english_is_unchanged_by_the_web_normalization(spark) -> None:  # type: ignore[no-untyped-def]
    """On text without markup or CJK the web pipeline makes the same exact groups and the same
    signatures (and ditto fingerprints) as no normalization: only the pipeline id differs."""
    from dedup_corpus import planted

    corpus = planted(n_families=6, n_singles=10, seed=5)
    plain = sorted(d for d in corpus.docs if "<" not in d[1])  # the planted HTML copies out
    assert len(plain) > 20
    docs = spark.createDataFrame(plain, "doc_id string, text string")
    for name, options in (("semblance", {"k": 125, "bands": 25, "rows": 5}), ("ditto/2", {})):
        web, plain = resolve(name, normalize="web", **options), resolve(name, **options)
        a = prepare(docs, web)
        assert sorted(a.collect()) != [] and web.id != plain.id
        assert sorted(exact_groups(a, web).collect()) == sorted(exact_groups(docs, plain).collect())
        assert sorted(sketch(a, web).collect()) == sorted(sketch(docs, plain).collect())
