"""Benchmark of the persistent index: does deduplicating a new batch against an index cost
what the batch costs, not what the index holds?

    .venv/bin/python bench/bench_index.py [--batch B] [--method minhash|simhash]

One process, one SparkSession (local[2]). From the benchmark's family corpus (lib.corpora:
real lines from ../shared/data/text, families of edited copies) of 11 B documents:

- the new batch: B documents drawn from the first 2 B (seeded), so about half of them have
  a near-duplicate among the other B of that prefix;
- the 1x index: those other B documents (one batch);
- the 10x index: the same batch plus the remaining 9 B documents in 3 more batches (other
  families: they add index size, not matches).

Timed, each best of ``--repeats``: the dedup job on the new batch alone (the baseline), with
``--against`` the 1x index and with ``--against`` the 10x index; and ``neardup similar`` /
``near`` (LocalIndex, no Spark) per query at 1x and 10x. Also: index build and add
throughput, the index's size on disk. Prints a table and one JSON line; docs/benchmarks.md
records a run. Working files go to out/bench_index/.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from lib.corpora import SEED, SHARED_DATA, Docs, load_real, scaled_corpus
from lib.progress import log
from lib.project import ROOT, load
from lib.spark import machine, start_spark
from lib.tables import print_table

from neardup_udfs.config import load_config, load_index_config
from neardup_udfs.index import store as index_store
from neardup_udfs.index.query import LocalIndex
from neardup_udfs.runs import dedup as dedup_job

index_job = load("jobs/index.py")

WORK = Path(os.environ.get("NEARDUP_BENCH_INDEX_WORK", ROOT / "out" / "bench_index"))
TARGET_RATIO = 2.0  # --against time at 10x the index over 1x


def _write(name: str, docs: Docs) -> Path:
    path = WORK / "corpora" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return path


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _settings(method: str) -> dict[str, Any]:
    common = {"input_format": "jsonl", "id_col": "id", "text_col": "text", "method": method}
    return common


def _index(spark: Any, action: str, src: Path, index: Path, method: str, batch: str) -> float:
    cfg = load_index_config(
        action=action, input=str(src), index=str(index), batch_id=batch, **_settings(method)
    )
    t = time.perf_counter()
    index_job.run(spark, cfg)
    return time.perf_counter() - t


def _dedup(
    spark: Any, src: Path, label: str, method: str, against: Path | None, repeats: int
) -> tuple[float, dedup_job.Summary]:
    out = WORK / "runs" / label
    cfg = load_config(
        None,
        input=str(src),
        output=str(out),
        outputs=("docs", "clusters", "rejects"),
        against=str(against) if against else None,
        **_settings(method),
    )
    best, summary = float("inf"), None
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        t = time.perf_counter()
        summary = dedup_job.run(spark, cfg)
        best = min(best, time.perf_counter() - t)
    assert summary is not None
    log(f"dedup {label}: {best:.1f} s, stages {summary.seconds}")
    return best, summary


def _query_ms(index: Path, method: str, texts: list[str]) -> float:
    local = LocalIndex(str(index))
    pipeline = index_store.pipeline_of(local.manifest)
    t = time.perf_counter()
    for text in texts:
        if method == "minhash":
            local.similar(pipeline.signature_batch([text])[0], 10)
        else:
            local.near(pipeline.fingerprint(text), 3)
    return 1000 * (time.perf_counter() - t) / len(texts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=5000, help="documents per batch (B)")
    p.add_argument("--method", choices=("minhash", "simhash"), default="minhash")
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args(argv)
    if not (SHARED_DATA / "text").exists():
        print(f"bench_index: skipped: {SHARED_DATA / 'text'} is absent (the real texts)")
        return 0
    b, method = args.batch, args.method
    shutil.rmtree(WORK, ignore_errors=True)
    real = [d for docs in load_real().values() for d in docs]
    corpus = scaled_corpus(real, 11 * b).docs
    rng = random.Random(SEED + 7)
    head = list(range(2 * b))
    rng.shuffle(head)
    new = [corpus[i] for i in sorted(head[:b])]
    first = [corpus[i] for i in sorted(head[b:])]
    rest = corpus[2 * b :]
    paths = {
        "new": _write("new", new),
        "first": _write("first", first),
        **{f"more{i}": _write(f"more{i}", rest[i * 3 * b : (i + 1) * 3 * b]) for i in range(3)},
    }
    spark = start_spark()
    log(f"warm-up on {len(new[:2000])} documents")
    _dedup(spark, _write("warm", new[:2000]), "warm", method, None, 1)

    idx1, idx10 = WORK / "index1x", WORK / "index10x"
    build_s = _index(spark, "build", paths["first"], idx1, method, "first")
    shutil.copytree(idx1, idx10)
    add_s = [_index(spark, "add", paths[f"more{i}"], idx10, method, f"more{i}") for i in range(3)]
    m1, m10 = index_store.open_index(str(idx1)), index_store.open_index(str(idx10))
    log(f"index 1x: {m1.documents} docs, 10x: {m10.documents} docs")

    base_s, base = _dedup(spark, paths["new"], "alone", method, None, args.repeats)
    one_s, one = _dedup(spark, paths["new"], "against1x", method, idx1, args.repeats)
    ten_s, ten = _dedup(spark, paths["new"], "against10x", method, idx10, args.repeats)
    spark.stop()
    probe = [t for _, t in new[:50]]
    q1, q10 = _query_ms(idx1, method, probe), _query_ms(idx10, method, probe)
    ratio = ten_s / one_s
    figures = {
        "machine": machine(),
        "method": method,
        "batch_docs": b,
        "index_docs": {"1x": m1.documents, "10x": m10.documents},
        "index_mb": {"1x": round(_du(idx1) / 1e6, 1), "10x": round(_du(idx10) / 1e6, 1)},
        "build_docs_s": round(m1.documents / build_s, 1),
        "add_docs_s": round(sum(b.documents for b in m10.batches[1:]) / sum(add_s), 1),
        "seconds": {"alone": round(base_s, 1), "against1x": round(one_s, 1)}
        | {"against10x": round(ten_s, 1)},
        "ratio_10x_over_1x": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "overhead_1x_over_alone": round(one_s / base_s, 3),
        "kept": {"alone": base.kept, "against1x": one.kept, "against10x": ten.kept},
        "index_matches": {"1x": one.index_matches, "10x": ten.index_matches},
        "against_stage_s": {"1x": one.seconds.get("against"), "10x": ten.seconds.get("against")},
        "query_ms": {"1x": round(q1, 2), "10x": round(q10, 2)},
    }
    rows = [
        ("new batch alone (baseline)", f"{base_s:.1f} s", base.kept, "-"),
        (f"--against 1x ({m1.documents} docs)", f"{one_s:.1f} s", one.kept, one.index_matches),
        (f"--against 10x ({m10.documents} docs)", f"{ten_s:.1f} s", ten.kept, ten.index_matches),
    ]
    print_table(f"dedup of {b} new documents ({method})", ["run", "time", "kept", "matched"], rows)
    verdict = "met" if ratio < TARGET_RATIO else "NOT met"
    print(f"10x / 1x = {ratio:.2f} (target < {TARGET_RATIO}: {verdict})")
    print(f"query ms (LocalIndex, per query): 1x {q1:.1f}, 10x {q10:.1f}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
