"""Winnowing throughput: the kernel, and the spans and boilerplate jobs on Spark, each against
the dedup job's fingerprint stage on the same documents in the same run.

    .venv/bin/python bench/bench_winnow.py [--every N]

Documents: the real texts of ../shared/data/text (Debian copyright files, fortunes, man
pages; lib.corpora.load_real); skipped with a message when that folder is absent.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lib.corpora import SHARED_DATA, load_real, write_corpus
from lib.project import ROOT, load
from lib.spark import start_spark
from lib.tables import print_table
from lib.timing import best_of

from neardup_udfs.config import load_boilerplate_config, load_config, load_spans_config
from neardup_udfs.kernels import winnow
from neardup_udfs.stages.fingerprint import sketch

boilerplate_job = load("jobs/boilerplate.py")
spans_job = load("jobs/spans.py")

K = W = 16
WORK = ROOT / "out" / "bench_winnow"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--every", type=int, default=1, help="use every N-th real text")
    p.add_argument(
        "--query-every", type=int, default=50, help="provenance queries: every N-th document"
    )
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"bench_winnow: skipped: {SHARED_DATA} is absent (the real texts are needed)")
        return 0
    docs = [d for part in load_real().values() for d in part][:: args.every]
    texts = [t for _, t in docs]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    figures: dict[str, Any] = {"bench": "winnow", "docs": len(docs), "mb": round(mb, 2)}

    winnow.text_batch(texts[:10], K, W)
    kernel = best_of(lambda: winnow.text_batch(texts, K, W), 3)
    figures["kernel_text_batch_mb_s"] = round(mb / kernel, 1)

    corpus = write_corpus("winnow_real", docs)
    queries = write_corpus("winnow_queries", docs[:: args.query_every])
    common = {
        "input_format": "jsonl",
        "id_col": "id",
        "text_col": "text",
        "kgram_bytes": K,
        "window": W,
    }
    spark = start_spark()
    try:
        dedup_cfg = load_config(None, input=str(corpus.path), output="-", input_format="jsonl")
        frame = spark.read.json(str(corpus.path)).selectExpr("id as doc_id", "text")

        def fingerprint_stage() -> None:
            out = sketch(frame, dedup_cfg.pipeline())
            out.write.format("noop").mode("overwrite").save()

        fingerprint_stage()  # warm-up: JVM, Python workers, JIT
        seconds = {"dedup fingerprint stage": best_of(fingerprint_stage, 1)}
        bp = load_boilerplate_config(
            input=str(corpus.path), output=str(WORK / "boilerplate"), **common
        )
        result: dict[str, Any] = {}
        seconds["boilerplate job"] = best_of(
            lambda: result.__setitem__("bp", boilerplate_job.run(spark, bp)), 1
        )
        sp = load_spans_config(
            input=str(corpus.path), query=str(queries.path), output=str(WORK / "spans"), **common
        )
        seconds["spans job (provenance)"] = best_of(
            lambda: result.__setitem__("sp", spans_job.run(spark, sp)), 1
        )
    finally:
        spark.stop()
    base = seconds["dedup fingerprint stage"]
    figures["seconds"] = {k: round(v, 1) for k, v in seconds.items()}
    figures["boilerplate"] = {
        "regions": result["bp"].regions,
        "docs_with_boilerplate": result["bp"].docs_with_boilerplate,
        "bytes_removed": result["bp"].bytes_removed,
        "stage_seconds": result["bp"].seconds,
    }
    figures["spans"] = {
        "queries": queries.n,
        "pairs": result["sp"].pairs,
        "spans": result["sp"].spans,
        "hot_hashes": result["sp"].hot_hashes,
        "stage_seconds": result["sp"].seconds,
    }
    print(f"winnowing (k = w = {K}) on the real texts: {len(docs)} docs, {mb:.1f} MB, local[2]")
    print(f"kernel winnow.text_batch, one core: {figures['kernel_text_batch_mb_s']} MB/s")
    print_table(
        "Spark, end to end (read .. write), same documents, same session",
        ["what", "seconds", "docs/s", "MB/s", "time / fingerprint stage"],
        [
            (name, round(s, 1), round(len(docs) / s), round(mb / s, 2), round(s / base, 2))
            for name, s in seconds.items()
        ],
    )
    print(f"boilerplate: {figures['boilerplate']}")
    print(f"spans: {figures['spans']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
