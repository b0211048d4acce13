"""Benchmark of WARC input: what does reading a crawl cost, next to the library underneath
it and next to the same documents given as JSON lines?

    .venv/bin/python bench/bench_warc.py [--docs N] [--repeats R]

1. Reader (no Spark), on the real crawl samples in ../shared/data/crawl (skipped with a
   message when absent): ``neardup_udfs.io.warc.read_file`` over every file against the
   baseline of bare warcio (iterate, read each payload), best of R; records/s, MB/s, ratio.
2. Job (Spark local[2]): the dedup job (MinHash defaults) on N documents of the benchmark's
   family corpus written as a crawl (.warc.gz, 4 files, a request record before each page)
   against the same documents as JSON lines; seconds, docs/s, ratio; both must give the
   same clusters.
3. Job on the real samples: records, documents, rejects by reason, seconds.

Prints tables and one JSON line; docs/benchmarks.md records a run. Working files go to
out/bench_warc/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from lib.corpora import SHARED_DATA, load_real, scaled_corpus
from lib.project import ROOT, load
from lib.spark import machine, start_spark
from lib.tables import print_table
from lib.timing import best_of
from warcio.archiveiterator import ArchiveIterator

from neardup_udfs.config import load_config
from neardup_udfs.io.warc import WarcOptions, read_file
from neardup_udfs.runs import dedup as dedup_job

_warc_corpus = load("tests/warc_corpus.py")
Crawl, write_documents = _warc_corpus.Crawl, _warc_corpus.write_documents

WORK = Path(os.environ.get("NEARDUP_BENCH_WARC_WORK", ROOT / "out" / "bench_warc"))
CRAWL = SHARED_DATA / "crawl"


def log(message: str) -> None:
    print(f"[bench_warc {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def real_files() -> list[Path]:
    return sorted(p for p in CRAWL.rglob("*.gz") if ".warc" in p.name)


def _ours(files: list[Path]) -> int:
    n = 0
    for p in files:
        with open(p, "rb") as fh:
            for _ in read_file(fh, str(p), os.path.getsize(p), WarcOptions()):
                n += 1
    return n


def _bare(files: list[Path]) -> int:
    n = 0
    for p in files:
        with open(p, "rb") as fh:
            for record in ArchiveIterator(fh):
                record.content_stream().read()
                n += 1
    return n


def reader(repeats: int) -> dict[str, Any] | None:
    files = real_files()
    if not files:
        log(f"reader: skipped, no crawl samples at {CRAWL}")
        return None
    mb = sum(p.stat().st_size for p in files) / 1e6
    records = _bare(files)
    assert _ours(files) == records, "the reader's rows differ from warcio's records"
    bare = best_of(lambda: _bare(files), repeats)
    ours = best_of(lambda: _ours(files), repeats)
    return {
        "files": len(files),
        "mb": round(mb, 2),
        "records": records,
        "bare_warcio_s": round(bare, 3),
        "neardup_s": round(ours, 3),
        "records_s": round(records / ours),
        "mb_s": round(mb / ours, 2),
        "ratio_vs_bare": round(ours / bare, 2),
    }


def _run(spark: Any, src: Path, label: str, **kw: Any) -> tuple[float, dedup_job.Summary]:
    out = WORK / "runs" / label
    shutil.rmtree(out, ignore_errors=True)
    cfg = load_config(None, input=str(src), output=str(out), **kw)
    t = time.perf_counter()
    summary = dedup_job.run(spark, cfg)
    return time.perf_counter() - t, summary


def _clusters(spark: Any, label: str) -> list[tuple[str, str]]:
    df = spark.read.parquet(str(WORK / "runs" / label / "clusters"))
    return sorted((r.doc_id, r.cluster_id) for r in df.collect())


def job(spark: Any, n_docs: int) -> dict[str, Any]:
    real = [d for docs in load_real().values() for d in docs]
    pages = scaled_corpus(real, n_docs).docs
    crawl_dir = WORK / "crawl"
    shutil.rmtree(crawl_dir, ignore_errors=True)
    crawl_dir.mkdir(parents=True)
    crawl = Crawl()
    for i in range(4):
        write_documents(crawl_dir / f"part-{i}.warc.gz", pages[i::4], crawl).close()
    jsonl = WORK / "docs.jsonl"
    with open(jsonl, "w", encoding="utf-8") as fh:
        for rid, text in crawl.documents.items():
            fh.write(json.dumps({"id": rid, "text": text}, ensure_ascii=False) + "\n")
    warm = pages[:200]
    warm_dir = WORK / "warm"
    shutil.rmtree(warm_dir, ignore_errors=True)
    warm_dir.mkdir(parents=True)
    write_documents(warm_dir / "w.warc.gz", warm, Crawl()).close()
    _run(spark, warm_dir, "warm", input_format="warc")
    log(f"job: {len(pages)} documents as WARC and as JSON lines")
    t_json, s_json = _run(spark, jsonl, "jsonl", input_format="jsonl", id_col="id")
    t_warc, s_warc = _run(spark, crawl_dir, "warc", input_format="warc")
    same = _clusters(spark, "jsonl") == _clusters(spark, "warc")
    crawl_mb = sum(p.stat().st_size for p in crawl_dir.iterdir()) / 1e6
    return {
        "documents": len(pages),
        "crawl_mb": round(crawl_mb, 2),
        "jsonl_s": round(t_json, 1),
        "warc_s": round(t_warc, 1),
        "ratio_warc_vs_jsonl": round(t_warc / t_json, 2),
        "warc_docs_s": round(len(pages) / t_warc, 1),
        "warc_read_stage_s": s_warc.seconds.get("read"),
        "jsonl_read_stage_s": s_json.seconds.get("read"),
        "same_clusters": same,
        "kept": s_warc.kept,
        "removed": s_warc.removed,
        "rejected": s_warc.rejected,
    }


def real_job(spark: Any) -> dict[str, Any] | None:
    if not real_files():
        log(f"real crawl job: skipped, no crawl samples at {CRAWL}")
        return None
    src = WORK / "real"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    for p in real_files():
        shutil.copy(p, src / f"{p.parent.name}-{p.name}")
    seconds, s = _run(spark, src, "real", input_format="warc")
    report = json.loads((WORK / "runs" / "real" / "report.json").read_text())
    return {
        "records": s.input,
        "documents": s.input - s.rejected,
        "kept": s.kept,
        "removed": s.removed,
        "seconds": round(seconds, 1),
        "unreadable_bytes": report["input"]["unreadable_bytes"],
        "rejects_by_reason": report["input"]["rejects_by_reason"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=5000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    results: dict[str, Any] = {"machine": machine()}
    results["reader"] = reader(args.repeats)
    spark = start_spark()
    try:
        results["job"] = job(spark, args.docs)
        results["real_job"] = real_job(spark)
    finally:
        spark.stop()
    r = results["reader"]
    if r:
        print_table(
            f"WARC reader on the real crawl samples (best of {args.repeats})",
            ["files", "MB", "records", "bare warcio s", "neardup s", "records/s", "ratio"],
            [
                [
                    r["files"],
                    r["mb"],
                    r["records"],
                    r["bare_warcio_s"],
                    r["neardup_s"],
                    r["records_s"],
                    r["ratio_vs_bare"],
                ]
            ],
        )
    j = results["job"]
    print_table(
        "dedup job: the same documents as WARC and as JSON lines",
        [
            "docs",
            "crawl MB",
            "jsonl s",
            "warc s",
            "warc/jsonl",
            "read stage s (warc/jsonl)",
            "same clusters",
        ],
        [
            [
                j["documents"],
                j["crawl_mb"],
                j["jsonl_s"],
                j["warc_s"],
                j["ratio_warc_vs_jsonl"],
                f"{j['warc_read_stage_s']} / {j['jsonl_read_stage_s']}",
                j["same_clusters"],
            ]
        ],
    )
    rj = results["real_job"]
    if rj:
        print_table(
            "dedup job on the real crawl samples",
            ["records", "documents", "kept", "removed", "seconds", "unreadable bytes"],
            [
                [
                    rj["records"],
                    rj["documents"],
                    rj["kept"],
                    rj["removed"],
                    rj["seconds"],
                    rj["unreadable_bytes"],
                ]
            ],
        )
    print(json.dumps(results, sort_keys=True))
    return 0 if j["same_clusters"] else 1


if __name__ == "__main__":
    sys.exit(main())
